// Internal to fk::h5: the recursive copy behind copy_object (copy.h).
//
// An object is rebuilt in the destination piece by piece instead of with H5Ocopy
// (which aborts in HDF5 1.10.8 on chunked datasets with the Fletcher32 filter, and on
// dense variable-length-string attributes): a group becomes a new group with the
// source's link and attribute storage settings, its attributes and, recursively, its
// members; a
// dataset becomes a new dataset with the source's datatype, dataspace (maximum
// dimensions included) and creation properties (layout, chunks, filters, fill value),
// whose elements are read through the filters — so every chunk's Fletcher32 checksum
// is verified on the way — and written again, in slabs of whole chunks; attributes
// (variable-length strings and compounds included) are read and written with their
// stored type, so nothing is converted. Committed datatypes are committed again; soft
// links are recreated with the same target path (an absolute one then names an object
// of the destination file, as with H5Ocopy); an object reached by a second hard link
// is linked again, not copied twice. External links, references, virtual and
// external-storage datasets (results files hold none) are kUnsupported.
#pragma once

#include "results/h5/detail/call.h"

#include <string>

namespace fk::h5::detail {

// Copies the open object `src` (a group, a dataset or a committed datatype) as the new
// link `name` below `dst_loc`, created with link-creation list `lcpl`. `src_at` and
// `dst_at` name the two places for errors (file and absolute object path). Throws
// fk::Error: kIo (naming the source object and with HDF5's reason) when reading or
// writing fails, kUnsupported for objects listed above. The caller unlinks what part
// of the copy was made.
void h5_copy_tree(hid_t src, Where src_at, hid_t dst_loc, const std::string& name, hid_t lcpl, Where dst_at);

}  // namespace fk::h5::detail
