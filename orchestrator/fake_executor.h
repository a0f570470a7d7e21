// A simulated executor for tests and the orchestrator's scale benchmark: attempts
// "run" on timers without any process, with outcomes chosen by a script (per job and
// attempt number), and successful attempts leave a job file marker, as fk-runner would.
#pragma once

#include "orchestrator/executor.h"

#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <map>
#include <memory>

namespace fk::orchestrator {

struct FakeOutcome {
  AttemptEnd end = AttemptEnd::kSucceeded;
  int exit_code = 0;
  double seconds = 0;  // simulated duration
  bool file_when_cancelled = false;  // cancel() ends it, but its job file lands (it had just finished)
  bool ignores_cancel = false;       // cancel() changes nothing: it runs its course
};

class FakeExecutor final : public Executor {
 public:
  // `script(job_id, attempt_number)` decides each attempt; `capacity` ranks at once.
  FakeExecutor(boost::asio::io_context& io, int capacity,
               std::function<FakeOutcome(const std::string&, int)> script);
  std::string name() const override { return "fake"; }
  int capacity() const override { return capacity_; }
  void launch(const LaunchRequest& request, Done done) override;
  void cancel(const std::string& attempt_id) override;
  std::vector<std::pair<std::string, std::string>> running() const override;
  bool sends_heartbeats() const override { return false; }
  std::string native_id(const std::string& attempt_id) const override {
    return pending_.count(attempt_id) ? "fake" : "";
  }
  int64_t launches() const { return launches_; }

 private:
  struct Pending {
    std::unique_ptr<boost::asio::steady_timer> timer;
    LaunchRequest request;
    Done done;
    FakeOutcome outcome;
  };
  void finish(const std::string& attempt_id, bool cancelled);

  boost::asio::io_context& io_;
  int capacity_;
  std::function<FakeOutcome(const std::string&, int)> script_;
  std::map<std::string, std::shared_ptr<Pending>> pending_;
  std::map<std::string, int> attempts_;  // per job
  int64_t launches_ = 0;
};

}  // namespace fk::orchestrator
