#include "core/fs_util.h"

#include "core/error.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fk {

std::string fs_read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    fail(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo, "{}: cannot open: {}", path, std::strerror(err));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail(ErrorKind::kIo, "{}: read failed", path);
  return ss.str();
}

std::string fs_temp_sibling(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

void fs_sync_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail(ErrorKind::kIo, "{}: cannot open for sync: {}", path, std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) fail(ErrorKind::kIo, "{}: fsync failed: {}", path, std::strerror(err));
}

void fs_sync_dir_of(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // best effort: some filesystems refuse directory opens
  ::fsync(fd);
  ::close(fd);
}

void fs_write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = fs_temp_sibling(path);
  {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr) fail(ErrorKind::kIo, "{}: cannot create: {}", tmp, std::strerror(errno));
    const size_t n = std::fwrite(content.data(), 1, content.size(), f);
    const bool ok = n == content.size() && std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
    const int err = errno;
    std::fclose(f);
    if (!ok) {
      std::remove(tmp.c_str());
      fail(ErrorKind::kIo, "{}: write failed: {}", path, std::strerror(err));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(ErrorKind::kIo, "{}: cannot rename into place: {}", path, std::strerror(err));
  }
  fs_sync_dir_of(path);
}

}  // namespace fk
