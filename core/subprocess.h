// Running a child process with a time limit and its output captured.
//
// subprocess_run() forks and execs argv (no shell), feeds `input` to its stdin,
// collects stdout and stderr (merged or separate), and kills the whole child process
// group when `timeout_s` passes (SIGTERM, then SIGKILL after a grace period). It
// reports how the child ended: exit status, or the signal that killed it, or the
// timeout. `on_line` (optional) sees stdout line by line as it arrives; returning
// false stops waiting for more output early is not supported — it is for progress.
// An inactivity limit (no output for `idle_timeout_s`) turns a silent hang into a
// timeout even when the total limit is long.
//
// Signals: the child starts with none of the caller's signal handlers (see
// subprocess_fork), so a signal sent to it before it execs never runs the caller's
// handler (an Asio signal_set would report the caller's SIGTERM).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace fk {

struct SubprocessOptions {
  double timeout_s = 0;       // 0: no total limit
  double idle_timeout_s = 0;  // 0: no inactivity limit
  std::string input;          // written to the child's stdin, then closed
  bool merge_stderr = true;   // stderr into the same buffer as stdout
  std::string working_dir;    // empty: inherit
  std::vector<std::string> extra_env;  // "NAME=value" added to the environment
  std::function<void(const std::string&)> on_line;  // each complete stdout line
  size_t max_output_bytes = size_t{16} << 20;       // beyond this, output is truncated
  void (*test_after_fork)() = nullptr;  // test seam: see subprocess_fork
  // Polled while the child runs (every 50 ms): once it is 1 the child's process group
  // gets SIGTERM (SIGKILL 2 s later), at 2 or more SIGKILL at once; the result then
  // says `stopped`. For a caller's SIGINT/SIGTERM handler, so that nothing it started
  // outlives it.
  const std::atomic<int>* stop = nullptr;
};

struct SubprocessResult {
  bool started = false;     // false: exec failed (error holds why)
  int exit_code = -1;       // when it exited normally
  int signal = 0;           // when a signal ended it (not our timeout kill)
  bool timed_out = false;   // our limit ended it
  bool idle_timeout = false;
  bool stopped = false;     // options.stop ended it
  double seconds = 0;
  std::string output;       // stdout (and stderr if merged)
  std::string error_output; // stderr when not merged
  std::string error;        // why it could not start
  bool ok() const { return started && !timed_out && !stopped && signal == 0 && exit_code == 0; }
  // "exit status 1", "killed by SIGSEGV", "time limit of 10 s reached"...
  std::string describe() const;
};

SubprocessResult subprocess_run(const std::vector<std::string>& argv, const SubprocessOptions& options = {});

// fork() for a child that will exec. Every signal is blocked across the fork; the
// child resets each signal that has a handler to SIG_DFL (ignored signals stay ignored,
// as exec keeps them) and only then restores the caller's mask, so a signal that
// reaches it before exec takes its default action instead of running a handler it
// inherited. The parent's mask is restored before this returns. `after_fork` (a test
// seam; null in production) runs in the child first, with every signal still blocked;
// it must be async-signal-safe. Returns what fork() returns (errno kept on failure).
pid_t subprocess_fork(void (*after_fork)() = nullptr);

// "SIGSEGV" for 11, "signal 77" for unknown numbers.
std::string signal_name(int signal);

}  // namespace fk
