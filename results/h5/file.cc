#include "results/h5/file.h"

#include "results/h5/detail/call.h"

#include <filesystem>

namespace fk::h5 {
using namespace detail;

File File::open(const std::string& path, bool update) {
  quiet_errors();
  const Where at{path, "/"};
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail_at(ErrorKind::kNotFound, at, "no such file");
  Handle fapl = h5_file_access(at);
  const unsigned flags = update ? H5F_ACC_RDWR : H5F_ACC_RDONLY;
  Handle file = h5_own(H5Fopen(path.c_str(), flags, fapl.get()), at,
                       update ? "cannot open HDF5 file for update" : "cannot open HDF5 file");
  return File(std::move(file), path);
}

File File::open_read(const std::string& path) { return open(path, false); }

File File::open_update(const std::string& path) { return open(path, true); }

void File::close() { h5_close_file(release_handle(), where()); }

}  // namespace fk::h5
