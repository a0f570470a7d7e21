// Slurm job states and pending reasons as values: parsing what squeue and sacct print,
// and the two classifications the Slurm executor's policy needs — is a state final,
// and can a pending reason clear by itself. Pure functions, no Slurm needed.
#pragma once

#include <string>
#include <string_view>

namespace fk::orchestrator {

// Job states of squeue(1)/sacct(1) ("JOB STATE CODES"), long or compact form.
enum class SlurmState {
  kUnknown,      // text we do not recognise
  kPending,      // PD: waiting for resources (see the reason)
  kConfiguring,  // CF: allocated, nodes booting
  kRunning,      // R
  kCompleting,   // CG: ending, some processes still alive
  kSuspended,    // S
  kStopped,      // ST: SIGSTOP, allocation kept
  kSignaling,    // SI
  kStageOut,     // SO
  kResizing,     // RS
  kRequeued,     // RQ: completing job being requeued (will pend again)
  kRequeueHold,  // RH: requeued and held
  kRequeueFed,   // RF
  kResvDelHold,  // RD: held, its reservation was deleted
  kSpecialExit,  // SE: requeued in a special state (held)
  kCompleted,    // CD: exit code 0
  kFailed,       // F: non-zero exit code or other failure
  kOutOfMemory,  // OOM
  kTimeout,      // TO: reached its time limit
  kDeadline,     // DL: reached its deadline
  kCancelled,    // CA: scancel (user, admin or the executor)
  kNodeFail,     // NF: an allocated node failed
  kBootFail,     // BF: nodes could not boot
  kPreempted,    // PR: preempted (not requeued)
  kRevoked,      // RV: federation sibling started elsewhere
};

// "RUNNING", "CANCELLED by 0", "CANCELLED+", "CD", "OUT_OF_MEMORY"... -> state;
// anything else -> kUnknown. Case-sensitive, as Slurm prints them.
SlurmState slurm_state_parse(std::string_view text);
std::string_view slurm_state_name(SlurmState state);  // the long form: "NODE_FAIL"

// Final states: the job's record will not change any more (a job Slurm requeues
// passes through REQUEUED/PENDING instead, never through a final state).
bool slurm_state_final(SlurmState state);
// States in which the job holds an allocation and its script may be running.
bool slurm_state_active(SlurmState state);
// States in which the job waits without an allocation (PENDING and the held ones).
bool slurm_state_waiting(SlurmState state);

// How a pending job's reason behaves over time.
enum class PendingClass {
  kWaiting,   // normal queueing (Priority, Resources, BeginTime, Dependency...): wait
  kStuck,     // needs someone to act (PartitionDown, NodeDown, ReqNodeNotAvail, held,
              // AssocGrp*/QOSGrp* aggregate limits...): may clear, usually does not
  kHopeless,  // the request itself can never run (PartitionConfig, PartitionTimeLimit,
              // BadConstraints, InvalidAccount, AssocMax*/QOSMax* per-job limits...)
};
// Classifies the reason squeue prints for a pending job ("ReqNodeNotAvail,
// UnavailableNodes:n1" counts as ReqNodeNotAvail). Unknown reasons count as kStuck.
PendingClass slurm_pending_class(std::string_view reason);
std::string_view pending_class_name(PendingClass c);

}  // namespace fk::orchestrator
