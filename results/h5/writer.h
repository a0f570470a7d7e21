// Writer: creates an HDF5 file atomically — readers and crashes never see half a file.
//
// The constructor creates "<target>.tmp.<pid>.<n>" in the target's folder
// (fs_temp_sibling) and the Writer is that file's root group: build everything through
// it. commit() closes the file (and every group or dataset still open from it: those
// objects become stale), fsyncs it, renames it onto the target (replacing an existing
// file atomically) and fsyncs the folder. Until commit() returns the target is
// untouched. A Writer destroyed without commit (an exception unwinding, an early
// return) closes and removes its temporary file; after a crash (no destructor) the
// temporary file may remain next to the target — it never has the target's name, so
// the campaign merge can ignore or delete "*.tmp.*" leftovers. Errors name the target.
#pragma once

#include "results/h5/group.h"

#include <string>

namespace fk::h5 {

class Writer : public Group {
 public:
  // Creates the temporary file for `target_path`. kIo naming both paths when it
  // cannot be created (missing folder, no permission).
  explicit Writer(std::string target_path);
  Writer(Writer&& other) noexcept;
  Writer& operator=(Writer&&) = delete;
  ~Writer();

  // Publishes the file at target_path(). kIo on failure, after which the temporary
  // file is removed and the target is as it was. Calling it twice is kInvalidArgument.
  void commit();

  const std::string& target_path() const { return file_path(); }
  // The temporary file being written; empty once committed.
  const std::string& temp_path() const { return temp_path_; }
  bool committed() const { return committed_; }

 private:
  Writer(std::string target_path, std::string temp_path);

  std::string temp_path_;
  bool committed_ = false;
};

}  // namespace fk::h5
