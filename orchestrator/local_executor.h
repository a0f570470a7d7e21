// The local executor: runs each attempt as `mpirun -np <ranks> fk-runner ...` on this
// machine, side by side up to `slots` ranks, supervised asynchronously on the
// orchestrator's io_context — SIGCHLD (asio::signal_set) reaps children, a
// steady_timer per attempt enforces its time limit (SIGTERM to the attempt's process
// group, SIGKILL after a grace period). Output goes to the attempt's log file.
#pragma once

#include "orchestrator/executor.h"

#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <map>
#include <memory>
#include <sys/types.h>

namespace fk::orchestrator {

class LocalExecutor final : public Executor {
 public:
  LocalExecutor(boost::asio::io_context& io, int slots);
  ~LocalExecutor() override;

  std::string name() const override { return "local"; }
  int capacity() const override { return slots_; }
  void launch(const LaunchRequest& request, Done done) override;
  void cancel(const std::string& attempt_id) override;
  std::vector<std::pair<std::string, std::string>> running() const override;
  std::string native_id(const std::string& attempt_id) const override {
    auto it = children_.find(attempt_id);
    return it == children_.end() ? "" : std::to_string(it->second->pid);
  }

  // The command an attempt runs (mpirun ... fk-runner ...).
  static std::vector<std::string> command(const LaunchRequest& request);
  // Kills a process group left by an earlier orchestrator if it is still one of ours
  // (its leader runs mpirun or fk-runner). Returns whether it killed something.
  static bool kill_stale(const std::string& native_id);

 private:
  struct Child {
    LaunchRequest request;
    Done done;
    pid_t pid = -1;
    std::unique_ptr<boost::asio::steady_timer> timer;
    bool timed_out = false, cancelled = false;
    std::chrono::steady_clock::time_point started;
  };
  void watch_children();
  void reap();
  void stop(Child& c, bool timed_out);

  boost::asio::io_context& io_;
  int slots_;
  boost::asio::signal_set sigchld_;
  std::map<std::string, std::shared_ptr<Child>> children_;  // by attempt id
};

}  // namespace fk::orchestrator
