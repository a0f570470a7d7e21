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
  FsAtomicWriter w(path);
  w.write(content);
  w.commit();
}

FsAtomicWriter::FsAtomicWriter(std::string path) : path_(std::move(path)), tmp_(fs_temp_sibling(path_)) {
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (f_ == nullptr) fail(ErrorKind::kIo, "{}: cannot create: {}", tmp_, std::strerror(errno));
}

FsAtomicWriter::~FsAtomicWriter() { abandon(); }

void FsAtomicWriter::abandon() {
  if (f_ == nullptr) return;
  std::fclose(f_);
  f_ = nullptr;
  std::remove(tmp_.c_str());
}

void FsAtomicWriter::write(std::string_view bytes) {
  if (f_ == nullptr) fail(ErrorKind::kIo, "{}: write after commit", path_);
  if (std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size()) {
    const int err = errno;
    abandon();
    fail(ErrorKind::kIo, "{}: write failed: {}", path_, std::strerror(err));
  }
}

void FsAtomicWriter::commit() {
  if (f_ == nullptr) fail(ErrorKind::kIo, "{}: commit after commit", path_);
  bool ok = std::fflush(f_) == 0 && ::fsync(::fileno(f_)) == 0;
  int err = errno;
  if (std::fclose(f_) != 0 && ok) {
    ok = false;
    err = errno;
  }
  f_ = nullptr;
  if (!ok) {
    std::remove(tmp_.c_str());
    fail(ErrorKind::kIo, "{}: write failed: {}", path_, std::strerror(err));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int rename_err = errno;
    std::remove(tmp_.c_str());
    fail(ErrorKind::kIo, "{}: cannot rename into place: {}", path_, std::strerror(rename_err));
  }
  fs_sync_dir_of(path_);
}

}  // namespace fk
