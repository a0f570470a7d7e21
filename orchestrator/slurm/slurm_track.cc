#include "orchestrator/slurm/slurm_track.h"

#include "core/subprocess.h"
#include "orchestrator/slurm/attempt_files.h"

#include <fmt/format.h>

#include <cmath>

namespace fk::orchestrator {
namespace {

AttemptResult result_of(const SlurmTrack& t, double now, AttemptEnd end, std::string reason) {
  AttemptResult r;
  r.attempt_id = t.attempt_id;
  r.native_id = t.job_id;
  r.end = end;
  r.seconds = now - t.launched_at;
  if (t.restarts > 0)
    reason += fmt::format("{}requeued {} time{} by Slurm (SLURM_RESTART_COUNT={})", reason.empty() ? "" : "; ",
                          t.restarts, t.restarts == 1 ? "" : "s", t.restarts);
  for (const auto& n : t.notes) reason += (reason.empty() ? "" : "; ") + n;
  r.reason = std::move(reason);
  return r;
}

// The batch script's word that srun returned 0 while some rank never started.
constexpr const char* kStepNotLaunched =
    "the job step did not launch: srun returned 0 but not every rank started (see the attempt log and slurmd's; "
    "retried as a node failure)";

std::string exit_text(int exit_code, int signal) {
  if (signal != 0) return fmt::format("fk-runner killed by {}", signal_name(signal));
  return fmt::format("fk-runner exited {}", exit_code);
}

// Slurm's reason column, worth repeating only when it says something.
std::string slurm_said(const SlurmJobInfo& i) {
  std::string s = fmt::format("Slurm {}", slurm_state_name(i.state));
  if (!i.reason.empty() && i.reason != "None" && i.reason != "NonZeroExitCode") s += ", " + i.reason;
  return s;
}

// The attempt's end when the executor itself cancelled it.
std::optional<AttemptResult> cancelled_by_us(const SlurmTrack& t, double now) {
  switch (t.cancel) {
    case SlurmCancelCause::kUser:
      return result_of(t, now, AttemptEnd::kCancelled, "cancelled");
    case SlurmCancelCause::kTimeLimit:
      return result_of(t, now, AttemptEnd::kTimedOut, t.cancel_note);
    case SlurmCancelCause::kPending:
      return result_of(t, now, AttemptEnd::kFailed, t.cancel_note);
    case SlurmCancelCause::kNone:
      break;
  }
  return std::nullopt;
}

AttemptResult from_final(const SlurmTrack& t, const SlurmJobInfo& i, const SlurmObservation& obs, double now) {
  int exit_code = i.exit_code, signal = i.signal;
  if (exit_code < 0 && obs.exit && obs.exit->job_id == t.job_id) exit_code = obs.exit->exit_code;
  auto finish = [&](AttemptEnd end, std::string reason) {
    AttemptResult r = result_of(t, now, end, std::move(reason));
    r.exit_code = exit_code;
    r.signal = signal;
    return r;
  };
  switch (i.state) {
    case SlurmState::kCompleted:
      if (exit_code <= 0 && signal == 0) {
        exit_code = 0;
        return finish(AttemptEnd::kSucceeded, "");
      }
      return finish(AttemptEnd::kFailed, fmt::format("{} ({})", exit_text(exit_code, signal), slurm_said(i)));
    case SlurmState::kFailed:
    case SlurmState::kSpecialExit:
      if (exit_code == kSlurmStepNotLaunchedExit && signal == 0)
        return finish(AttemptEnd::kNodeFailure, fmt::format("{} ({})", kStepNotLaunched, slurm_said(i)));
      return finish(AttemptEnd::kFailed, fmt::format("{} ({})", exit_text(exit_code, signal), slurm_said(i)));
    case SlurmState::kOutOfMemory:
      return finish(AttemptEnd::kFailed, fmt::format("out of memory ({})", slurm_said(i)));
    case SlurmState::kTimeout:
      if (t.cancel == SlurmCancelCause::kTimeLimit) return finish(AttemptEnd::kTimedOut, t.cancel_note);
      return finish(
          AttemptEnd::kTimedOut,
          fmt::format("Slurm time limit reached (limit {:.0f} s, rounded up to whole minutes)", t.time_limit_s));
    case SlurmState::kDeadline:
      return finish(AttemptEnd::kTimedOut, fmt::format("deadline reached ({})", slurm_said(i)));
    case SlurmState::kCancelled:
      if (auto r = cancelled_by_us(t, now)) {
        r->exit_code = exit_code;
        r->signal = signal;
        return *r;
      }
      return finish(AttemptEnd::kCancelled, fmt::format("cancelled outside fk ({})", i.state_text));
    case SlurmState::kNodeFail:
    case SlurmState::kBootFail:
      return finish(AttemptEnd::kNodeFailure, fmt::format("node failure ({})", slurm_said(i)));
    case SlurmState::kPreempted:
      return finish(AttemptEnd::kNodeFailure, fmt::format("preempted: Slurm took the nodes ({})", slurm_said(i)));
    default:
      return finish(AttemptEnd::kLost, fmt::format("job {} ended as {}", t.job_id, i.state_text));
  }
}

// Slurm no longer knows the job; its exit_code file says how the script ended.
AttemptResult from_exit_file(const SlurmTrack& t, const ExitRecord& e, bool accounting, double now) {
  const std::string source = fmt::format("from its exit_code file: Slurm no longer lists job {} and {}", t.job_id,
                                         accounting ? "sacct does not know it" : "sacct is unavailable");
  std::optional<AttemptResult> r = cancelled_by_us(t, now);
  if (!r && e.exit_code == kSlurmStepNotLaunchedExit)
    r = result_of(t, now, AttemptEnd::kNodeFailure, fmt::format("{} ({})", kStepNotLaunched, source));
  if (!r && e.exit_code == 0) r = result_of(t, now, AttemptEnd::kSucceeded, source);
  // SIGTERM/SIGKILL reached the ranks (srun exits 128 + signal) or the script itself.
  const bool terminated = e.terminated || e.exit_code == 128 + 15 || e.exit_code == 128 + 9;
  if (!r && terminated) {
    const double ran = t.running_since >= 0 ? now - t.running_since : 0;
    const double slurm_limit = std::ceil(t.time_limit_s / 60) * 60;
    if (t.time_limit_s > 0 && ran >= slurm_limit)
      r = result_of(t, now, AttemptEnd::kTimedOut, fmt::format("terminated at its time limit ({})", source));
    else
      r = result_of(t, now, AttemptEnd::kCancelled, fmt::format("terminated by SIGTERM outside fk ({})", source));
  }
  if (!r) r = result_of(t, now, AttemptEnd::kFailed, fmt::format("fk-runner exited {} ({})", e.exit_code, source));
  r->exit_code = e.exit_code;
  return *r;
}

std::optional<AttemptResult> from_nothing(const SlurmTrack& t, const SlurmObservation& obs, double now) {
  if (auto r = cancelled_by_us(t, now)) return r;
  const std::string nobody =
      obs.accounting ? "neither squeue nor sacct knows it" : "squeue no longer lists it and sacct is unavailable";
  if (obs.start && obs.start->job_id == t.job_id)
    return result_of(t, now, AttemptEnd::kLost,
                     fmt::format("job {} ran (on {}) but left no exit code and {}: killed hard or its node failed",
                                 t.job_id, obs.start->host, nobody));
  return result_of(t, now, AttemptEnd::kLost, fmt::format("job {} never started and {}", t.job_id, nobody));
}

}  // namespace

SlurmTrack slurm_track_start(const LaunchRequest& request, const std::string& job_id, double now) {
  SlurmTrack t;
  t.attempt_id = request.attempt_id;
  t.job_id = job_id;
  t.time_limit_s = request.time_limit_s;
  t.launched_at = now;
  return t;
}

bool slurm_track_cancel(SlurmTrack& t, SlurmCancelCause cause, std::string note, double now) {
  if (t.cancel != SlurmCancelCause::kNone) return false;
  t.cancel = cause;
  t.cancel_note = std::move(note);
  if (t.job_id.empty()) return false;
  t.cancel_sent_at = now;
  return true;
}

SlurmTrackDecision slurm_track_observe(SlurmTrack& t, const SlurmObservation& obs, double now,
                                       const SlurmPolicy& policy) {
  SlurmTrackDecision d;
  t.unreachable_since = -1;
  if (!obs.info) {
    // A job briefly missing from squeue and sacct (a requeue in flight, a slow
    // controller) may still run again: neither its exit_code file nor the lack of one
    // decides until Slurm has forgotten it for `missing_polls` polls in a row.
    if (++t.missing < policy.missing_polls) return d;
    if (obs.exit && obs.exit->job_id == t.job_id && obs.exit->restarts >= t.restarts) {
      d.result = from_exit_file(t, *obs.exit, obs.accounting, now);
      return d;
    }
    d.result = from_nothing(t, obs, now);
    return d;
  }
  const SlurmJobInfo& i = *obs.info;
  t.missing = 0;
  if (i.restarts > t.restarts) {
    t.restarts = i.restarts;
    t.running_since = -1;
  }
  t.state = i.state;
  if (slurm_state_final(i.state)) {
    d.result = from_final(t, i, obs, now);
    return d;
  }
  if (slurm_state_waiting(i.state)) {
    t.running_since = -1;  // a run that ended in a requeue
    if (t.waiting_since < 0) t.waiting_since = now;
    t.pending_reason = i.reason;
    PendingClass c = slurm_pending_class(i.reason);
    const bool held = i.state == SlurmState::kRequeueHold || i.state == SlurmState::kSpecialExit ||
                      i.state == SlurmState::kResvDelHold;
    if (held && c == PendingClass::kWaiting) c = PendingClass::kStuck;
    if (i.state == SlurmState::kRequeued) c = PendingClass::kWaiting;  // passing through
    if (c == PendingClass::kWaiting) {
      t.stuck_since = t.hopeless_since = -1;
    } else {
      if (t.stuck_since < 0) t.stuck_since = now;
      if (c == PendingClass::kHopeless && t.hopeless_since < 0) t.hopeless_since = now;
      if (c != PendingClass::kHopeless) t.hopeless_since = -1;
    }
    std::string note;
    if (t.hopeless_since >= 0 && now - t.hopeless_since >= policy.hopeless_pending_limit_s)
      note = fmt::format(
          "pending with reason {}, which cannot clear: the job can never run as submitted (check "
          "executor.slurm partition/account/qos and the time limit); cancelled",
          i.reason);
    else if (t.stuck_since >= 0 && now - t.stuck_since >= policy.stuck_pending_limit_s)
      note = fmt::format("pending for {:.0f} s with reason {}, which needs an administrator; cancelled",
                         now - t.stuck_since, i.reason);
    else if (policy.pending_limit_s > 0 && now - t.waiting_since >= policy.pending_limit_s)
      note = fmt::format("pending for {:.0f} s (limit {:.0f} s), reason {}; cancelled", now - t.waiting_since,
                         policy.pending_limit_s, i.reason);
    if (!note.empty() && slurm_track_cancel(t, SlurmCancelCause::kPending, note, now)) {
      d.scancel = true;
      return d;
    }
  } else {  // holds an allocation (or a state we do not know: treat it as running)
    t.waiting_since = t.stuck_since = t.hopeless_since = -1;
    if (t.running_since < 0) t.running_since = now;
    const double ran = now - t.running_since;
    if (policy.time_limit_grace_s >= 0 && t.time_limit_s > 0 && ran > t.time_limit_s + policy.time_limit_grace_s &&
        slurm_track_cancel(t, SlurmCancelCause::kTimeLimit,
                           fmt::format("time limit of {:.0f} s reached (ran {:.0f} s; cancelled by the executor)",
                                       t.time_limit_s, ran),
                           now)) {
      d.scancel = true;
      return d;
    }
  }
  if (t.cancel != SlurmCancelCause::kNone && t.cancel_sent_at >= 0 &&
      now - t.cancel_sent_at >= policy.cancel_resend_s) {
    t.cancel_sent_at = now;
    d.scancel = true;
  }
  return d;
}

SlurmTrackDecision slurm_track_unreachable(SlurmTrack& t, const std::string& error, double now,
                                           const SlurmPolicy& policy) {
  SlurmTrackDecision d;
  if (t.unreachable_since < 0) t.unreachable_since = now;
  if (now - t.unreachable_since >= policy.unreachable_limit_s) {
    d.scancel = true;  // best effort: it may still run somewhere
    d.result = result_of(t, now, AttemptEnd::kLost,
                         fmt::format("cannot reach Slurm for {:.0f} s: {}", now - t.unreachable_since, error));
  }
  return d;
}

}  // namespace fk::orchestrator
