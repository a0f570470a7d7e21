// The Slurm executor's policy as a pure state machine: what one attempt's Slurm job
// has been seen doing, and what to do about each new observation. No I/O, no clock of
// its own (callers pass `now`), no Slurm: SlurmExecutor (slurm_executor.h) polls,
// reads the attempt's files and carries out the decisions (scancel, report the end).
//
// How Slurm states become AttemptEnd (docs/slurm.md has the full table):
//   COMPLETED                       -> kSucceeded (kFailed if the exit code is not 0)
//   FAILED, OUT_OF_MEMORY, SPECIAL_EXIT -> kFailed with the exit code / signal
//   TIMEOUT, DEADLINE               -> kTimedOut
//   CANCELLED                       -> kCancelled, or what the executor cancelled it for
//                                      (its own time limit -> kTimedOut, a pending
//                                      reason that would not clear -> kFailed)
//   NODE_FAIL, BOOT_FAIL, PREEMPTED -> kNodeFailure
//   REVOKED, unknown to everyone    -> kLost
//   PENDING with a reason that needs a person (stuck) or can never clear (hopeless)
//   for longer than its limit       -> scancel, then kFailed naming the reason
//   restart count going up (requeue after node failure, scontrol requeue) -> keep
//   following; the final reason says how many times Slurm requeued it
//   gone from squeue, no sacct      -> the exit_code file (attempt_files.h) decides
#pragma once

#include "orchestrator/executor.h"
#include "orchestrator/slurm/attempt_files.h"
#include "orchestrator/slurm/slurm_client.h"

#include <optional>
#include <string>
#include <vector>

namespace fk::orchestrator {

struct SlurmPolicy {
  double stuck_pending_limit_s = 1800;   // a reason that needs a person (PartitionDown, held...)
  double hopeless_pending_limit_s = 60;  // a reason that cannot clear (PartitionConfig...)
  double pending_limit_s = 0;            // any pending reason, normal queueing included; 0 = none
  // The executor's own limit: a job seen running longer than the attempt's time limit
  // plus this grace is cancelled and reported kTimedOut (Slurm's --time, rounded up to
  // whole minutes, normally ends it first). < 0: leave time limits to Slurm alone.
  double time_limit_grace_s = 60;
  int missing_polls = 3;              // polls a job may be unknown to Slurm before the files decide
  double unreachable_limit_s = 1800;  // Slurm unanswered this long -> kLost
  double cancel_resend_s = 60;        // scancel again when a cancelled job is still alive after this
};

enum class SlurmCancelCause { kNone, kUser, kTimeLimit, kPending };

// What is known about one attempt's job. Updated only by the slurm_track_* functions.
struct SlurmTrack {
  std::string attempt_id;
  std::string job_id;
  double time_limit_s = 0;
  double launched_at = 0;

  SlurmState state = SlurmState::kUnknown;  // last seen
  int restarts = 0;                         // highest restart count seen
  std::vector<std::string> notes;           // requeues and such, for the final reason
  double running_since = -1;                // first poll that saw the current run active
  double waiting_since = -1;                // first poll of the current pending spell
  double stuck_since = -1, hopeless_since = -1;
  std::string pending_reason;
  int missing = 0;  // consecutive polls unknown to Slurm
  double unreachable_since = -1;

  SlurmCancelCause cancel = SlurmCancelCause::kNone;
  std::string cancel_note;  // why the executor cancelled it
  double cancel_sent_at = -1;
};

// What the executor should do after an observation.
struct SlurmTrackDecision {
  bool scancel = false;                 // send scancel for the job now
  std::optional<AttemptResult> result;  // the attempt ended: report this
};

// One poll's view of the job.
struct SlurmObservation {
  std::optional<SlurmJobInfo> info;  // what squeue/sacct said; empty: neither knows the job
  bool accounting = true;            // whether sacct was available
  std::optional<ExitRecord> exit;    // the attempt's exit_code file, when present
  std::optional<StartRecord> start;  // the attempt's started file, when present
};

SlurmTrack slurm_track_start(const LaunchRequest& request, const std::string& job_id, double now);
SlurmTrackDecision slurm_track_observe(SlurmTrack& track, const SlurmObservation& obs, double now,
                                       const SlurmPolicy& policy);
// The query itself failed (Slurm unreachable, command timed out).
SlurmTrackDecision slurm_track_unreachable(SlurmTrack& track, const std::string& error, double now,
                                           const SlurmPolicy& policy);
// The executor decided to cancel (cancel(), or its own limits). Idempotent: the first
// cause sticks. Returns whether scancel should be sent.
bool slurm_track_cancel(SlurmTrack& track, SlurmCancelCause cause, std::string note, double now);

}  // namespace fk::orchestrator
