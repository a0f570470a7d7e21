// The campaign's state machine: what each job is doing, and the retry / quarantine
// policy applied when an attempt ends. Pure: no I/O, no clocks; the orchestrator feeds
// it events (launched, ended, found done) and acts on what it decides. Replaying the
// journal through the same transitions restores it after a crash.
#pragma once

#include "orchestrator/executor.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fk::orchestrator {

enum class JobPhase { kPending, kRunning, kDone, kFailed };
std::string_view job_phase_name(JobPhase p);

struct JobTrack {
  std::string id;
  int ranks = 1;
  bool has_candidates = false;
  JobPhase phase = JobPhase::kPending;
  int attempts = 0;       // attempts started
  int failures = 0;       // attempts that ended without the job file
  bool quarantined = false;  // candidates dropped after a crash (drop-and-retry)
  std::string attempt;    // the running attempt
  std::string reason;     // the last failure, for humans
  bool may_pass = false;  // given up for a reason that may have gone away (resume retries it)
};

enum class Decision { kDone, kRetry, kRetryQuarantined, kGiveUp };
std::string_view decision_name(Decision d);
// The inverse of attempt_end_name; nullopt for a name it does not know.
std::optional<AttemptEnd> attempt_end_parse(std::string_view name);

// fk-runner's exit statuses (docs/runner.md) that the policy reads.
inline constexpr int kRunnerExitBadInput = 2;   // the job file or the layout
inline constexpr int kRunnerExitJobFailed = 3;  // the job failed at run time
inline constexpr int kRunnerExitCrashed = 4;    // a rank crashed: a candidate, or a bug
inline constexpr int kRunnerExitResults = 5;    // the results folder cannot be created
inline constexpr int kRunnerExitIo = 6;         // writing results / reading inputs failed

// Whether an attempt that ended so failed for a reason outside the job that may have
// gone away: the machine or its file system (exit 5, 6, mpirun's own failures), the
// scheduler (cancelled, node failure, lost) or the attempt's time limit (timed out or
// hung). False for the job's own failures: bad input (2), a job error (3), a crash (4 or
// a signal). `fk run --resume` runs jobs given up for such a reason again.
bool failure_may_pass(AttemptEnd end, int exit_code, int signal);

struct RetryPolicy {
  int max_retries = 2;  // attempts after the first
};

// What to do with a job whose attempt ended as `r`; `have_file` says whether its job
// file is now in the results folder (the truth about completion).
Decision decide(const JobTrack& job, const AttemptResult& r, bool have_file, const RetryPolicy& policy);

struct Counts {
  int pending = 0, running = 0, done = 0, failed = 0, retried = 0;
  int total() const { return pending + running + done + failed; }
};

class CampaignState {
 public:
  void add(JobTrack job);
  JobTrack& job(const std::string& id);
  const std::vector<std::string>& order() const { return order_; }
  bool has(const std::string& id) const { return jobs_.count(id) != 0; }

  void launched(const std::string& id, const std::string& attempt, bool quarantined);
  // Applies the policy; returns the decision it took.
  Decision ended(const std::string& id, const AttemptResult& r, bool have_file, const RetryPolicy& policy);
  void mark_done(const std::string& id);
  // Resume: jobs given up for a reason that may have gone away (failure_may_pass) become
  // pending with a fresh retry budget (attempt numbers and quarantine are kept). Returns
  // their ids in plan order. The journal records it as "retry_given_up" (see replay).
  std::vector<std::string> retry_given_up();
  void retry_given_up(const std::string& id);
  // Replays journal events (launch/end/done/retry_given_up); attempts launched but never
  // ended are returned as (attempt id, native id) for the caller to clean up.
  std::vector<std::pair<std::string, std::string>> replay(const std::vector<nlohmann::json>& events);

  Counts counts() const;
  // Pending jobs in plan order.
  std::vector<std::string> runnable() const;
  bool finished() const;

 private:
  std::map<std::string, JobTrack> jobs_;
  std::vector<std::string> order_;
};

}  // namespace fk::orchestrator
