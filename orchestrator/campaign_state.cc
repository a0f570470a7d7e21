#include "orchestrator/campaign_state.h"

#include "core/error.h"

#include <fmt/format.h>

namespace fk::orchestrator {

std::string_view job_phase_name(JobPhase p) {
  switch (p) {
    case JobPhase::kPending: return "pending";
    case JobPhase::kRunning: return "running";
    case JobPhase::kDone: return "done";
    case JobPhase::kFailed: return "failed";
  }
  return "?";
}

std::string_view decision_name(Decision d) {
  switch (d) {
    case Decision::kDone: return "done";
    case Decision::kRetry: return "retry";
    case Decision::kRetryQuarantined: return "retry_quarantined";
    case Decision::kGiveUp: return "give_up";
  }
  return "?";
}

std::string_view attempt_end_name(AttemptEnd e) {
  switch (e) {
    case AttemptEnd::kSucceeded: return "succeeded";
    case AttemptEnd::kFailed: return "failed";
    case AttemptEnd::kTimedOut: return "timed_out";
    case AttemptEnd::kCancelled: return "cancelled";
    case AttemptEnd::kNodeFailure: return "node_failure";
    case AttemptEnd::kLost: return "lost";
  }
  return "?";
}

std::optional<AttemptEnd> attempt_end_parse(std::string_view name) {
  for (AttemptEnd e : {AttemptEnd::kSucceeded, AttemptEnd::kFailed, AttemptEnd::kTimedOut, AttemptEnd::kCancelled,
                       AttemptEnd::kNodeFailure, AttemptEnd::kLost})
    if (attempt_end_name(e) == name) return e;
  return std::nullopt;
}

bool failure_may_pass(AttemptEnd end, int exit_code, int signal) {
  if (end != AttemptEnd::kFailed) return true;
  return signal == 0 && exit_code != kRunnerExitBadInput && exit_code != kRunnerExitJobFailed &&
         exit_code != kRunnerExitCrashed;
}

Decision decide(const JobTrack& job, const AttemptResult& r, bool have_file, const RetryPolicy& policy) {
  if (have_file) return Decision::kDone;
  // Bad input (the job file or the layout): running it again cannot help.
  if (r.end == AttemptEnd::kFailed && r.exit_code == kRunnerExitBadInput) return Decision::kGiveUp;
  // A crash or a hang may be a candidate's doing; an I/O error (exit 6: a full disk)
  // never is, so it is retried like any other failure, without quarantine.
  const bool crash_like = (r.end == AttemptEnd::kFailed && (r.exit_code == kRunnerExitCrashed || r.signal != 0)) ||
                          r.end == AttemptEnd::kTimedOut;
  const bool exhausted = job.failures >= policy.max_retries;
  // Drop-and-retry: a job with candidates that crashed or hung runs again without them,
  // so its baseline measurements and the verdict (CRASHED/TIMEOUT) still land.
  if (crash_like && job.has_candidates && !job.quarantined) return Decision::kRetryQuarantined;
  return exhausted ? Decision::kGiveUp : Decision::kRetry;
}

void CampaignState::add(JobTrack job) {
  order_.push_back(job.id);
  jobs_[job.id] = std::move(job);
}

JobTrack& CampaignState::job(const std::string& id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) fail(ErrorKind::kInternal, "unknown job {}", id);
  return it->second;
}

void CampaignState::launched(const std::string& id, const std::string& attempt, bool quarantined) {
  JobTrack& j = job(id);
  j.phase = JobPhase::kRunning;
  j.attempt = attempt;
  ++j.attempts;
  j.quarantined = j.quarantined || quarantined;
}

Decision CampaignState::ended(const std::string& id, const AttemptResult& r, bool have_file,
                              const RetryPolicy& policy) {
  JobTrack& j = job(id);
  const Decision d = decide(j, r, have_file, policy);
  j.attempt.clear();
  switch (d) {
    case Decision::kDone:
      j.phase = JobPhase::kDone;
      break;
    case Decision::kRetryQuarantined:
      j.quarantined = true;
      [[fallthrough]];
    case Decision::kRetry:
      ++j.failures;
      j.phase = JobPhase::kPending;
      j.reason = r.reason;
      break;
    case Decision::kGiveUp:
      ++j.failures;
      j.phase = JobPhase::kFailed;
      j.reason = r.reason;
      j.may_pass = failure_may_pass(r.end, r.exit_code, r.signal);
      break;
  }
  return d;
}

std::vector<std::string> CampaignState::retry_given_up() {
  std::vector<std::string> out;
  for (const auto& id : order_)
    if (const JobTrack& j = jobs_.at(id); j.phase == JobPhase::kFailed && j.may_pass) {
      retry_given_up(id);
      out.push_back(id);
    }
  return out;
}

void CampaignState::retry_given_up(const std::string& id) {
  JobTrack& j = job(id);
  if (j.phase != JobPhase::kFailed) return;
  j.phase = JobPhase::kPending;
  j.failures = 0;
  j.may_pass = false;
}

void CampaignState::mark_done(const std::string& id) {
  JobTrack& j = job(id);
  j.phase = JobPhase::kDone;
  j.attempt.clear();
}

std::vector<std::pair<std::string, std::string>> CampaignState::replay(const std::vector<nlohmann::json>& events) {
  std::map<std::string, std::string> open;  // attempt -> native id
  for (const auto& e : events) {
    const std::string kind = e.value("event", "");
    const std::string id = e.value("job", "");
    if (!id.empty() && !has(id)) continue;  // a job no longer in the plan
    if (kind == "launch") {
      launched(id, e.value("attempt", ""), e.value("quarantined", false));
      open[e.value("attempt", "")] = e.value("native_id", "");
    } else if (kind == "native_id") {
      open[e.value("attempt", "")] = e.value("native_id", "");
    } else if (kind == "end") {
      open.erase(e.value("attempt", ""));
      JobTrack& j = job(id);
      const std::string decision = e.value("decision", "");
      j.attempt.clear();
      j.reason = e.value("reason", "");
      if (decision == "done") {
        j.phase = JobPhase::kDone;
      } else if (decision == "give_up") {
        ++j.failures;
        j.phase = JobPhase::kFailed;
        const auto end = attempt_end_parse(e.value("end", ""));
        j.may_pass = end && failure_may_pass(*end, e.value("exit_code", -1), e.value("signal", 0));
      } else {
        ++j.failures;
        j.quarantined = j.quarantined || decision == "retry_quarantined";
        j.phase = JobPhase::kPending;
      }
    } else if (kind == "done") {
      mark_done(id);
    } else if (kind == "retry_given_up") {
      retry_given_up(id);
    }
  }
  // Attempts that never ended belonged to a dead orchestrator: their jobs run again.
  std::vector<std::pair<std::string, std::string>> stale(open.begin(), open.end());
  for (auto& [id, j] : jobs_)
    if (j.phase == JobPhase::kRunning) {
      j.phase = JobPhase::kPending;
      j.attempt.clear();
    }
  return stale;
}

Counts CampaignState::counts() const {
  Counts c;
  for (const auto& [id, j] : jobs_) {
    switch (j.phase) {
      case JobPhase::kPending: ++c.pending; break;
      case JobPhase::kRunning: ++c.running; break;
      case JobPhase::kDone: ++c.done; break;
      case JobPhase::kFailed: ++c.failed; break;
    }
    c.retried += j.failures > 0 && j.phase != JobPhase::kFailed ? 1 : 0;
  }
  return c;
}

std::vector<std::string> CampaignState::runnable() const {
  std::vector<std::string> out;
  for (const auto& id : order_)
    if (jobs_.at(id).phase == JobPhase::kPending) out.push_back(id);
  return out;
}

bool CampaignState::finished() const {
  for (const auto& [id, j] : jobs_)
    if (j.phase == JobPhase::kPending || j.phase == JobPhase::kRunning) return false;
  return true;
}

}  // namespace fk::orchestrator
