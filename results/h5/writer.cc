#include "results/h5/writer.h"

#include "core/fs_util.h"
#include "results/h5/detail/call.h"
#include "results/h5/file_sum.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace fk::h5 {
using namespace detail;

namespace {

Handle create_temp_file(const std::string& target, const std::string& temp) {
  quiet_errors();
  const Where at{target, "/"};
  Handle fapl = h5_file_access(at, /*create=*/true);
  // A user block for the whole-file checksum commit() writes (file_sum.h).
  Handle fcpl = h5_own(H5Pcreate(H5P_FILE_CREATE), at, "cannot create property list");
  h5_check(H5Pset_userblock(fcpl.get(), kFileSumBlock), at, "cannot reserve a user block");
  h5_compact_attributes(fcpl.get(), at);  // the root group's
  return h5_own(H5Fcreate(temp.c_str(), H5F_ACC_EXCL, fcpl.get(), fapl.get()), at,
                fmt::format("cannot create temporary file {}", temp));
}

}  // namespace

Writer::Writer(std::string target_path) : Writer(target_path, fs_temp_sibling(target_path)) {}

Writer::Writer(std::string target_path, std::string temp_path)
    : Group(create_temp_file(target_path, temp_path), target_path, "/"), temp_path_(std::move(temp_path)) {}

Writer::Writer(Writer&& other) noexcept
    : Group(std::move(other)),
      temp_path_(std::exchange(other.temp_path_, std::string())),
      committed_(other.committed_) {}

Writer::~Writer() {
  if (committed_ || temp_path_.empty()) return;
  release_handle().reset();  // closes the file and everything still open in it
  std::remove(temp_path_.c_str());
}

void Writer::commit() {
  const Where at{file_path(), "/"};
  if (committed_) fail_at(ErrorKind::kInvalidArgument, at, "cannot commit: already committed");
  if (temp_path_.empty()) fail_at(ErrorKind::kInvalidArgument, at, "cannot commit: writer was moved from");
  try {
    h5_close_file(release_handle(), at);
    file_sum_write(temp_path_);
    fs_sync_file(temp_path_);
    if (std::rename(temp_path_.c_str(), file_path().c_str()) != 0) {
      fail_at(ErrorKind::kIo, at, fmt::format("cannot rename {} into place: {}", temp_path_, std::strerror(errno)));
    }
  } catch (...) {
    std::remove(temp_path_.c_str());
    temp_path_.clear();
    throw;
  }
  fs_sync_dir_of(file_path());
  committed_ = true;
  temp_path_.clear();
}

}  // namespace fk::h5
