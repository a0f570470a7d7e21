// File: an existing HDF5 file opened for reading (or, non-atomically, for update).
//
// A File is its own root group ("/"): file.set_attr(...) sets a root attribute (what
// h5py shows as f.attrs), file.read_table("a/b") reads "/a/b". To create files use
// Writer (writer.h), which is atomic. Closing the file (close() or the destructor)
// closes every object opened from it; such objects become stale (calls throw kIo).
#pragma once

#include "results/h5/group.h"

#include <string>

namespace fk::h5 {

class File : public Group {
 public:
  // Opens `path` read-only. kNotFound when there is no such file; kIo (with HDF5's
  // reason, e.g. "file signature not found") when it is not a readable HDF5 file.
  static File open_read(const std::string& path);
  // Opens `path` for reading and writing in place. Changes are NOT atomic: a crash can
  // leave the file half-updated. Prefer Writer for anything a reader may see. It also
  // leaves a Writer file's whole-file checksum (file_sum.h) stale, so fk collect,
  // report and compare will call the file damaged afterwards.
  static File open_update(const std::string& path);

  // Flushes and closes; errors throw kIo. The destructor closes silently.
  void close();

 private:
  File(Handle id, std::string path) : Group(std::move(id), std::move(path), "/") {}
  static File open(const std::string& path, bool update);
};

}  // namespace fk::h5
