// The campaign's state machine: what each job is doing, and the retry / quarantine
// policy applied when an attempt ends. Pure: no I/O, no clocks; the orchestrator feeds
// it events (launched, ended, found done) and acts on what it decides. Replaying the
// journal through the same transitions restores it after a crash.
#pragma once

#include "orchestrator/executor.h"

#include <nlohmann/json.hpp>

#include <map>
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
};

enum class Decision { kDone, kRetry, kRetryQuarantined, kGiveUp };
std::string_view decision_name(Decision d);

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
  // Replays journal events (launch/end/done/gave_up); attempts launched but never
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
