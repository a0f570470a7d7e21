#include "orchestrator/slurm/slurm_state.h"

#include <array>
#include <utility>

namespace fk::orchestrator {
namespace {

struct StateName {
  SlurmState state;
  std::string_view name, compact;
};

constexpr std::array<StateName, 24> kStates = {{
    {SlurmState::kPending, "PENDING", "PD"},
    {SlurmState::kConfiguring, "CONFIGURING", "CF"},
    {SlurmState::kRunning, "RUNNING", "R"},
    {SlurmState::kCompleting, "COMPLETING", "CG"},
    {SlurmState::kSuspended, "SUSPENDED", "S"},
    {SlurmState::kStopped, "STOPPED", "ST"},
    {SlurmState::kSignaling, "SIGNALING", "SI"},
    {SlurmState::kStageOut, "STAGE_OUT", "SO"},
    {SlurmState::kResizing, "RESIZING", "RS"},
    {SlurmState::kRequeued, "REQUEUED", "RQ"},
    {SlurmState::kRequeueHold, "REQUEUE_HOLD", "RH"},
    {SlurmState::kRequeueFed, "REQUEUE_FED", "RF"},
    {SlurmState::kResvDelHold, "RESV_DEL_HOLD", "RD"},
    {SlurmState::kSpecialExit, "SPECIAL_EXIT", "SE"},
    {SlurmState::kCompleted, "COMPLETED", "CD"},
    {SlurmState::kFailed, "FAILED", "F"},
    {SlurmState::kOutOfMemory, "OUT_OF_MEMORY", "OOM"},
    {SlurmState::kTimeout, "TIMEOUT", "TO"},
    {SlurmState::kDeadline, "DEADLINE", "DL"},
    {SlurmState::kCancelled, "CANCELLED", "CA"},
    {SlurmState::kNodeFail, "NODE_FAIL", "NF"},
    {SlurmState::kBootFail, "BOOT_FAIL", "BF"},
    {SlurmState::kPreempted, "PREEMPTED", "PR"},
    {SlurmState::kRevoked, "REVOKED", "RV"},
}};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace

SlurmState slurm_state_parse(std::string_view text) {
  // sacct prints "CANCELLED by 1000" and, when the column is too narrow, "CANCELLED+".
  const size_t end = text.find_first_of(" +\t\r\n");
  const std::string_view word = text.substr(0, end);
  for (const auto& s : kStates)
    if (word == s.name || word == s.compact) return s.state;
  return SlurmState::kUnknown;
}

std::string_view slurm_state_name(SlurmState state) {
  for (const auto& s : kStates)
    if (s.state == state) return s.name;
  return "UNKNOWN";
}

bool slurm_state_final(SlurmState s) {
  switch (s) {
    case SlurmState::kCompleted:
    case SlurmState::kFailed:
    case SlurmState::kOutOfMemory:
    case SlurmState::kTimeout:
    case SlurmState::kDeadline:
    case SlurmState::kCancelled:
    case SlurmState::kNodeFail:
    case SlurmState::kBootFail:
    case SlurmState::kPreempted:
    case SlurmState::kRevoked:
      return true;
    default:
      return false;
  }
}

bool slurm_state_active(SlurmState s) {
  switch (s) {
    case SlurmState::kConfiguring:
    case SlurmState::kRunning:
    case SlurmState::kCompleting:
    case SlurmState::kSuspended:
    case SlurmState::kStopped:
    case SlurmState::kSignaling:
    case SlurmState::kStageOut:
    case SlurmState::kResizing:
      return true;
    default:
      return false;
  }
}

bool slurm_state_waiting(SlurmState s) {
  switch (s) {
    case SlurmState::kPending:
    case SlurmState::kRequeued:
    case SlurmState::kRequeueHold:
    case SlurmState::kRequeueFed:
    case SlurmState::kResvDelHold:
    case SlurmState::kSpecialExit:
      return true;
    default:
      return false;
  }
}

PendingClass slurm_pending_class(std::string_view reason) {
  // "ReqNodeNotAvail, UnavailableNodes:node[1-2]" -> "ReqNodeNotAvail"
  const std::string_view r = reason.substr(0, reason.find_first_of(", ("));
  // Normal queueing: clears as the cluster (or this campaign's own jobs) move on.
  static constexpr std::array<std::string_view, 14> kWaiting = {
      "",         "None",   "Priority", "Resources",         "BeginTime",   "Dependency",  "WaitingForScheduling",
      "Cleaning", "Prolog", "Licenses", "JobArrayTaskLimit", "PowerUpNode", "Reservation", "NodeReady"};
  for (auto w : kWaiting)
    if (r == w) return PendingClass::kWaiting;
  // Job-count limits (AssocMaxJobsLimit, QOSMaxJobsPerUserLimit, AssocGrpJobsLimit,
  // AssociationJobLimit, QOSJobLimit...) clear as this user's other jobs end.
  if (contains(r, "MaxJobs") || contains(r, "GrpJobs") || contains(r, "MaxSubmit") || contains(r, "GrpSubmit") ||
      r == "AssociationJobLimit" || r == "QOSJobLimit")
    return PendingClass::kWaiting;
  // The request can never be satisfied as submitted.
  static constexpr std::array<std::string_view, 9> kHopeless = {
      "PartitionConfig",          "PartitionTimeLimit", "BadConstraints", "InvalidAccount", "InvalidQOS",
      "DependencyNeverSatisfied", "AccountNotAllowed",  "QOSNotAllowed",  "MaxTimeLimit"};
  for (auto h : kHopeless)
    if (r == h) return PendingClass::kHopeless;
  if ((starts_with(r, "AssocMax") || starts_with(r, "QOSMax")) && contains(r, "PerJob")) return PendingClass::kHopeless;
  if (starts_with(r, "AssocMax") && !contains(r, "Jobs"))
    return PendingClass::kHopeless;  // AssocMaxCpuMinutesPerJobLimit...
  // Everything else (PartitionDown, PartitionInactive, PartitionNodeLimit, NodeDown,
  // ReqNodeNotAvail, JobHeldAdmin, JobHeldUser, AssocGrp*/QOSGrp* resource limits,
  // QOSUsageThreshold, SystemFailure, unknown reasons) waits for a person.
  return PendingClass::kStuck;
}

std::string_view pending_class_name(PendingClass c) {
  switch (c) {
    case PendingClass::kWaiting:
      return "waiting";
    case PendingClass::kStuck:
      return "stuck";
    case PendingClass::kHopeless:
      return "hopeless";
  }
  return "?";
}

}  // namespace fk::orchestrator
