// Copying objects between files (and unlinking them again): a group with everything
// below it (groups, datasets, attributes) or one dataset. The copy is rebuilt object by
// object (detail/copy_tree.h), not with H5Ocopy: every dataset keeps its datatype,
// shape, maximum shape and creation properties — layout, chunk size, filters (shuffle,
// gzip, Fletcher32), fill value — and its elements are read through the filters and
// written again, so every chunk's Fletcher32 checksum is verified on the way and a
// damaged chunk fails the copy instead of being carried into the destination. Data are
// never converted: values are read and written in their stored type.
//
//   fk::h5::File job = fk::h5::File::open_read("results/7a7ecb8b94a2.h5");
//   fk::h5::copy_object(job, ".", writer, "jobs/7a7ecb8b94a2");  // the whole file
#pragma once

#include "results/h5/group.h"

#include <string_view>

namespace fk::h5 {

// Copies the object at `from_path` below `from` ("." or "" for `from` itself, e.g. a
// file's root group; absolute paths allowed) to `to_path` below `to`, creating the
// missing parent groups. The copy of a group holds all its members and attributes,
// recursively; a file's root copies as a group carrying the root's attributes. `from`
// and `to` may be in the same file or different ones.
// kNotFound when the source does not exist; kInvalidArgument when `to_path` is empty
// or already exists (nothing is overwritten); kIo when reading or writing fails, the
// message starting with the object that failed and HDF5's reason ("<job file>:
// /kernel_stage/instances: cannot read dataset (HDF5: data error detected by Fletcher32
// checksum ...)" for a damaged source) and naming both places after it ("(copying
// <file>:/ to <file>:/jobs/x)"); kUnsupported for what results files never hold
// (external links, object references, virtual datasets). On failure any part of
// the copy already made is unlinked (the space it took stays allocated in the
// destination file); missing parent groups it created stay.
void copy_object(const Group& from, std::string_view from_path, Group& to, std::string_view to_path);

// Unlinks `path` below `group` (a group goes with everything below it), e.g. to take
// back a copy. The file does not shrink: HDF5 does not reuse the space until the file
// is repacked. kNotFound when `path` does not exist; kInvalidArgument for "" or ".".
void remove_object(Group& group, std::string_view path);

}  // namespace fk::h5
