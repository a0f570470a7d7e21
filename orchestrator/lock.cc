#include "orchestrator/lock.h"

#include "core/error.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

namespace fk::orchestrator {
namespace {

std::string lock_path(const std::string& dir) { return dir + "/.fk-lock"; }

std::string read_all(int fd) {
  std::string s;
  char buf[512];
  lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

ResultsLock::ResultsLock(const std::string& dir) {
  fd_ = ::open(lock_path(dir).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(ErrorKind::kIo, "{}: cannot open the lock file: {}", lock_path(dir), std::strerror(errno));
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string who = read_all(fd_);
    ::close(fd_);
    fd_ = -1;
    fail(ErrorKind::kInvalidArgument,
         "results folder {} is in use by another fk run ({}); wait for it, stop it, or use another --results",
         dir, who.empty() ? "holder unknown" : who);
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const std::string who = fmt::format("pid {} on host {} since {}\n", ::getpid(), host, when);
  if (ftruncate(fd_, 0) == 0) (void)!write(fd_, who.data(), who.size());
}

ResultsLock::~ResultsLock() {
  if (fd_ >= 0) {
    (void)!ftruncate(fd_, 0);
    flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

std::optional<std::string> ResultsLock::holder(const std::string& dir) {
  const int fd = ::open(lock_path(dir).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> who;
  if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
    who = read_all(fd);
  } else {
    flock(fd, LOCK_UN);
  }
  ::close(fd);
  return who;
}

}  // namespace fk::orchestrator
