#include "orchestrator/progress.h"

#include <ctime>
#include <fmt/format.h>
#include <unistd.h>

namespace fk::orchestrator {

std::string format_duration(double s) {
  if (s < 0 || s != s) return "?";
  const auto t = static_cast<int64_t>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t / 60) % 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

Progress::Progress(std::FILE* out, bool force_plain)
    : out_(out), tty_(!force_plain && isatty(fileno(out)) != 0), start_(std::chrono::steady_clock::now()) {}

std::string Progress::status_text(const Counts& c, double mean_job_s, int parallel) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int left = c.pending + c.running;
  const double eta = mean_job_s > 0 && parallel > 0 ? mean_job_s * left / parallel : -1;
  return fmt::format("[{}/{} done, {} running, {} failed, {} retried] elapsed {}, ETA {}", c.done, c.total(),
                     c.running, c.failed, c.retried, format_duration(elapsed),
                     left == 0 ? "0s" : eta < 0 ? "?" : format_duration(eta));
}

void Progress::log(const std::string& line) {
  if (tty_) {
    fmt::print(out_, "\r\033[K{}\n", line);
    if (!last_status_.empty()) fmt::print(out_, "{}", last_status_);
  } else {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char ts[16];
    std::strftime(ts, sizeof ts, "%H:%M:%S", &tm);
    fmt::print(out_, "{} {}\n", ts, line);
  }
  std::fflush(out_);
}

void Progress::status(const Counts& c, double mean_job_s, int parallel) {
  const std::string s = status_text(c, mean_job_s, parallel);
  if (tty_) {
    last_status_ = s;
    fmt::print(out_, "\r\033[K{}", s);
    std::fflush(out_);
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (s != last_status_ && now - last_plain_ > std::chrono::seconds(10)) {
    last_status_ = s;
    last_plain_ = now;
    log(s);
  }
}

void Progress::finish() {
  if (tty_ && !last_status_.empty()) fmt::print(out_, "\n");
  std::fflush(out_);
}

}  // namespace fk::orchestrator
