// Progress of `fk run`: on a terminal, one status line redrawn in place (done,
// running, failed, retried, elapsed, ETA) with event lines scrolling above it;
// otherwise plain timestamped log lines, one per event, and a status line at most every
// `interval` seconds.
#pragma once

#include "orchestrator/campaign_state.h"

#include <chrono>
#include <cstdio>
#include <string>

namespace fk::orchestrator {

class Progress {
 public:
  explicit Progress(std::FILE* out = stdout, bool force_plain = false);
  // An event line ("job abc123 done in 3.2 s").
  void log(const std::string& line);
  // The status line for `counts`; `mean_job_s` estimates the ETA with `parallel` jobs.
  void status(const Counts& counts, double mean_job_s, int parallel);
  void finish();

 private:
  std::string status_text(const Counts& c, double mean_job_s, int parallel) const;
  std::FILE* out_;
  bool tty_;
  std::string last_status_;
  std::chrono::steady_clock::time_point start_, last_plain_;
};

std::string format_duration(double seconds);

}  // namespace fk::orchestrator
