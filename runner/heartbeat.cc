#include "runner/heartbeat.h"

#include <arpa/inet.h>
#include <cstdio>
#include <ctime>
#include <fmt/format.h>
#include <netdb.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

namespace fk::runner {
namespace {

std::atomic<uint64_t> g_progress{0};

int connect_to(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return -1;
  const std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

}  // namespace

void progress_tick() { g_progress.fetch_add(1, std::memory_order_relaxed); }
uint64_t progress_count() { return g_progress.load(std::memory_order_relaxed); }

void progress_note(const std::string& message) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  fmt::print(stderr, "fk-runner: {:02}:{:02}:{:02} {}\n", tm.tm_hour, tm.tm_min, tm.tm_sec, message);
  std::fflush(stderr);
}

Heartbeat::Heartbeat(const std::string& address, std::string attempt, int rank, double interval_s)
    : attempt_(std::move(attempt)), rank_(rank), interval_s_(interval_s) {
  fd_ = connect_to(address);
  if (fd_ >= 0) thread_ = std::thread([this] { loop(); });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) close(fd_);
}

void Heartbeat::send_line(const std::string& line) {
  if (fd_ < 0) return;
  const std::string l = line + "\n";
  if (::send(fd_, l.data(), l.size(), MSG_NOSIGNAL) < 0) {
    close(fd_);
    fd_ = -1;
  }
}

void Heartbeat::event(const std::string& name, const std::string& job) {
  std::lock_guard<std::mutex> lock(mu_);
  send_line(nlohmann::json{{"attempt", attempt_}, {"event", name}, {"job", job}, {"rank", rank_}}.dump());
}

void Heartbeat::loop() {
  uint64_t seen = progress_count();
  std::unique_lock<std::mutex> lock(mu_);
  send_line(nlohmann::json{{"attempt", attempt_}, {"event", "alive"}, {"rank", rank_}}.dump());
  while (!cv_.wait_for(lock, std::chrono::duration<double>(interval_s_), [this] { return stop_; })) {
    const uint64_t now = progress_count();
    if (now == seen) continue;  // stuck: stay silent
    seen = now;
    send_line(nlohmann::json{{"attempt", attempt_}, {"event", "alive"}, {"rank", rank_}}.dump());
  }
}

}  // namespace fk::runner
