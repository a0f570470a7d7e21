// Slurm states and pending reasons as values, the attempt files' formats, and the pure
// policy (slurm_track.h) on hand-made observations.
#include "orchestrator/slurm/attempt_files.h"
#include "orchestrator/slurm/slurm_state.h"
#include "orchestrator/slurm/slurm_track.h"

#include <gtest/gtest.h>

using namespace fk::orchestrator;
using S = SlurmState;

TEST(SlurmState, ParsesLongCompactAndDecoratedForms) {
  EXPECT_EQ(slurm_state_parse("RUNNING"), S::kRunning);
  EXPECT_EQ(slurm_state_parse("R"), S::kRunning);
  EXPECT_EQ(slurm_state_parse("CANCELLED by 1000"), S::kCancelled);
  EXPECT_EQ(slurm_state_parse("CANCELLED+"), S::kCancelled);
  EXPECT_EQ(slurm_state_parse("OUT_OF_MEMORY"), S::kOutOfMemory);
  EXPECT_EQ(slurm_state_parse("OOM"), S::kOutOfMemory);
  EXPECT_EQ(slurm_state_parse("NF"), S::kNodeFail);
  EXPECT_EQ(slurm_state_parse("REQUEUE_HOLD"), S::kRequeueHold);
  EXPECT_EQ(slurm_state_parse("running"), S::kUnknown);
  EXPECT_EQ(slurm_state_parse(""), S::kUnknown);
  EXPECT_EQ(slurm_state_name(S::kNodeFail), "NODE_FAIL");
}

TEST(SlurmState, EveryStateIsExactlyOneOfFinalActiveWaitingOrUnknown) {
  for (int i = 0; i <= static_cast<int>(S::kRevoked); ++i) {
    const S s = static_cast<S>(i);
    const int kinds = slurm_state_final(s) + slurm_state_active(s) + slurm_state_waiting(s);
    EXPECT_EQ(kinds, s == S::kUnknown ? 0 : 1) << slurm_state_name(s);
    if (s != S::kUnknown) {
      EXPECT_EQ(slurm_state_parse(slurm_state_name(s)), s);
    }
  }
}

TEST(SlurmState, PendingReasonClasses) {
  for (const char* r : {"None", "Priority", "Resources", "BeginTime", "Dependency", "WaitingForScheduling",
                        "QOSMaxJobsPerUserLimit", "AssocMaxJobsLimit", "AssocGrpJobsLimit", "QOSJobLimit", ""})
    EXPECT_EQ(slurm_pending_class(r), PendingClass::kWaiting) << r;
  for (const char* r : {"PartitionDown", "PartitionInactive", "NodeDown", "ReqNodeNotAvail, UnavailableNodes:n[1-2]",
                        "JobHeldAdmin", "JobHeldUser", "AssocGrpGRES", "AssocGrpCpuLimit", "QOSGrpNodeLimit",
                        "launch failed requeued held", "SomethingNew"})
    EXPECT_EQ(slurm_pending_class(r), PendingClass::kStuck) << r;
  for (const char* r :
       {"PartitionConfig", "PartitionTimeLimit", "BadConstraints", "InvalidAccount", "InvalidQOS",
        "DependencyNeverSatisfied", "QOSMaxWallDurationPerJobLimit", "AssocMaxCpuPerJobLimit", "QOSMaxGRESPerJob"})
    EXPECT_EQ(slurm_pending_class(r), PendingClass::kHopeless) << r;
}

TEST(AttemptFiles, ExitAndStartRecords) {
  const auto e = exit_record_parse("143 1 77 1\n");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 143);
  EXPECT_EQ(e->restarts, 1);
  EXPECT_EQ(e->job_id, "77");
  EXPECT_TRUE(e->terminated);
  EXPECT_EQ(exit_record_format(*e), "143 1 77 1\n");
  EXPECT_FALSE(exit_record_parse("").has_value());
  EXPECT_FALSE(exit_record_parse("x 0 77 0").has_value());
  EXPECT_FALSE(exit_record_parse("0 0").has_value()) << "a half-written line is no record";
  const auto s = start_record_parse("77 0 node1 1700000000\n77 1 node2 1700000300\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->runs, 2);
  EXPECT_EQ(s->restarts, 1);
  EXPECT_EQ(s->host, "node2");
  EXPECT_FALSE(start_record_parse("").has_value());
}

namespace {

SlurmJobInfo info(S state, std::string reason = "None", int exit_code = -1, int restarts = 0) {
  SlurmJobInfo i;
  i.job_id = "9";
  i.state = state;
  i.state_text = std::string(slurm_state_name(state));
  i.reason = std::move(reason);
  i.exit_code = exit_code;
  i.restarts = restarts;
  return i;
}

SlurmTrack track(double time_limit_s = 100) {
  LaunchRequest r;
  r.attempt_id = "j.a1";
  r.time_limit_s = time_limit_s;
  return slurm_track_start(r, "9", 0);
}

SlurmObservation seen(SlurmJobInfo i) {
  SlurmObservation o;
  o.info = std::move(i);
  return o;
}

}  // namespace

TEST(SlurmTrack, RunningUnderTheLimitNeedsNothing) {
  SlurmTrack t = track(100);
  SlurmPolicy p;
  p.time_limit_grace_s = 10;
  EXPECT_FALSE(slurm_track_observe(t, seen(info(S::kRunning)), 5, p).scancel);
  const auto d = slurm_track_observe(t, seen(info(S::kRunning)), 110, p);
  EXPECT_FALSE(d.scancel) << "100 s limit + 10 s grace, measured from the first poll that saw it run (t=5)";
  EXPECT_FALSE(d.result);
  const auto over = slurm_track_observe(t, seen(info(S::kRunning)), 116, p);
  EXPECT_TRUE(over.scancel);
  EXPECT_EQ(t.cancel, SlurmCancelCause::kTimeLimit);
  const auto end = slurm_track_observe(t, seen(info(S::kCancelled, "None", -1)), 117, p);
  ASSERT_TRUE(end.result);
  EXPECT_EQ(end.result->end, AttemptEnd::kTimedOut);
  EXPECT_EQ(end.result->native_id, "9");
  EXPECT_DOUBLE_EQ(end.result->seconds, 117);
}

TEST(SlurmTrack, RequeueRestartsTheRunClock) {
  SlurmTrack t = track(100);
  SlurmPolicy p;
  p.time_limit_grace_s = 0;
  slurm_track_observe(t, seen(info(S::kRunning)), 0, p);
  slurm_track_observe(t, seen(info(S::kPending, "BeginTime", -1, 1)), 90, p);
  EXPECT_EQ(t.restarts, 1);
  EXPECT_FALSE(slurm_track_observe(t, seen(info(S::kRunning, "None", -1, 1)), 95, p).scancel);
  EXPECT_FALSE(slurm_track_observe(t, seen(info(S::kRunning, "None", -1, 1)), 180, p).scancel)
      << "the second run started at 95";
  EXPECT_TRUE(slurm_track_observe(t, seen(info(S::kRunning, "None", -1, 1)), 196, p).scancel);
}

TEST(SlurmTrack, ScancelIsResentWhenTheJobLingers) {
  SlurmTrack t = track();
  SlurmPolicy p;
  p.cancel_resend_s = 30;
  EXPECT_TRUE(slurm_track_cancel(t, SlurmCancelCause::kUser, "cancelled", 10));
  EXPECT_FALSE(slurm_track_cancel(t, SlurmCancelCause::kTimeLimit, "later", 11)) << "the first cause sticks";
  EXPECT_FALSE(slurm_track_observe(t, seen(info(S::kRunning)), 20, p).scancel);
  EXPECT_TRUE(slurm_track_observe(t, seen(info(S::kCompleting)), 41, p).scancel);
  const auto end = slurm_track_observe(t, seen(info(S::kCancelled)), 42, p);
  ASSERT_TRUE(end.result);
  EXPECT_EQ(end.result->end, AttemptEnd::kCancelled);
}

TEST(SlurmTrack, CompletedRaceWithCancelKeepsSlurmsWord) {
  SlurmTrack t = track();
  slurm_track_cancel(t, SlurmCancelCause::kUser, "cancelled", 1);
  const auto end = slurm_track_observe(t, seen(info(S::kCompleted, "None", 0)), 2, SlurmPolicy{});
  ASSERT_TRUE(end.result);
  EXPECT_EQ(end.result->end, AttemptEnd::kSucceeded);
}

TEST(SlurmTrack, StepThatDidNotLaunchIsANodeFailure) {
  {  // Slurm's word: the script exited kSlurmStepNotLaunchedExit (srun returned 0, no rank ran)
    SlurmTrack t = track();
    const auto end =
        slurm_track_observe(t, seen(info(S::kFailed, "NonZeroExitCode", kSlurmStepNotLaunchedExit)), 2, SlurmPolicy{});
    ASSERT_TRUE(end.result);
    EXPECT_EQ(end.result->end, AttemptEnd::kNodeFailure);
    EXPECT_NE(end.result->reason.find("the job step did not launch"), std::string::npos) << end.result->reason;
  }
  {  // the exit_code file's word, once Slurm has forgotten the job
    SlurmTrack t = track();
    SlurmPolicy p;
    p.missing_polls = 1;
    ExitRecord e;
    e.exit_code = kSlurmStepNotLaunchedExit;
    e.job_id = "9";
    SlurmObservation o;
    o.exit = e;
    const auto end = slurm_track_observe(t, o, 2, p);
    ASSERT_TRUE(end.result);
    EXPECT_EQ(end.result->end, AttemptEnd::kNodeFailure) << end.result->reason;
    EXPECT_NE(end.result->reason.find("exit_code file"), std::string::npos) << end.result->reason;
  }
}

TEST(SlurmTrack, ExitFileInferenceForTermination) {
  SlurmPolicy p;
  p.missing_polls = 1;
  ExitRecord term;
  term.exit_code = 143;
  term.job_id = "9";
  term.terminated = true;
  {  // terminated after running past its (whole-minute) Slurm limit: a time limit
    SlurmTrack t = track(60);
    slurm_track_observe(t, seen(info(S::kRunning)), 1, p);
    SlurmObservation o;
    o.accounting = false;
    o.exit = term;
    const auto d = slurm_track_observe(t, o, 70, p);
    ASSERT_TRUE(d.result);
    EXPECT_EQ(d.result->end, AttemptEnd::kTimedOut) << d.result->reason;
  }
  {  // the executor cancelled it itself
    SlurmTrack t = track(60);
    slurm_track_cancel(t, SlurmCancelCause::kUser, "cancelled", 1);
    SlurmObservation o;
    o.exit = term;
    const auto d = slurm_track_observe(t, o, 2, p);
    ASSERT_TRUE(d.result);
    EXPECT_EQ(d.result->end, AttemptEnd::kCancelled);
  }
  {  // a record of another job (an earlier attempt reusing the folder) is ignored
    SlurmTrack t = track(60);
    SlurmObservation o;
    ExitRecord other = term;
    other.job_id = "8";
    o.exit = other;
    const auto d = slurm_track_observe(t, o, 2, p);
    ASSERT_TRUE(d.result);
    EXPECT_EQ(d.result->end, AttemptEnd::kLost);
  }
}

TEST(SlurmTrack, ExitFileWaitsUntilSlurmHasForgottenTheJob) {
  SlurmPolicy p;
  p.missing_polls = 3;
  SlurmTrack t = track();
  slurm_track_observe(t, seen(info(S::kRunning)), 1, p);
  ExitRecord failed;  // the first run's file: it failed, then Slurm requeued the job
  failed.exit_code = 1;
  failed.job_id = "9";
  SlurmObservation gone;
  gone.exit = failed;
  EXPECT_FALSE(slurm_track_observe(t, gone, 2, p).result) << "one missed poll decides nothing";
  EXPECT_FALSE(slurm_track_observe(t, gone, 3, p).result);
  // The requeue shows up: the job runs again, and the stale file must not end it.
  EXPECT_FALSE(slurm_track_observe(t, seen(info(S::kPending, "BeginTime", -1, 1)), 4, p).result);
  EXPECT_EQ(t.missing, 0) << "seeing the job resets the count";
  EXPECT_FALSE(slurm_track_observe(t, seen(info(S::kRunning, "None", -1, 1)), 5, p).result);
  ExitRecord ok;
  ok.exit_code = 0;
  ok.job_id = "9";
  ok.restarts = 1;
  SlurmObservation done;
  done.exit = ok;
  EXPECT_FALSE(slurm_track_observe(t, done, 6, p).result);
  EXPECT_FALSE(slurm_track_observe(t, done, 7, p).result);
  const auto d = slurm_track_observe(t, done, 8, p);
  ASSERT_TRUE(d.result) << "the third poll without the job lets the file decide";
  EXPECT_EQ(d.result->end, AttemptEnd::kSucceeded) << d.result->reason;
}

TEST(SlurmTrack, UnreachableCountsFromTheFirstFailureAndResetsOnAnswer) {
  SlurmTrack t = track();
  SlurmPolicy p;
  p.unreachable_limit_s = 50;
  EXPECT_FALSE(slurm_track_unreachable(t, "down", 10, p).result);
  EXPECT_FALSE(slurm_track_unreachable(t, "down", 59, p).result);
  slurm_track_observe(t, seen(info(S::kRunning)), 60, p);
  EXPECT_FALSE(slurm_track_unreachable(t, "down", 70, p).result) << "the clock restarted after an answer";
  const auto d = slurm_track_unreachable(t, "down", 120, p);
  ASSERT_TRUE(d.result);
  EXPECT_EQ(d.result->end, AttemptEnd::kLost);
  EXPECT_TRUE(d.scancel);
}
