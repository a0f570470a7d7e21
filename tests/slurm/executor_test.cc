// SlurmExecutor against the scripted fake Slurm: every Slurm state and injected fault
// maps to the documented AttemptEnd, `done` fires exactly once, cancellations reach
// scancel, and the rendered script carries the request.
#include "executor_harness.h"

#include "core/error.h"
#include "orchestrator/slurm/attempt_files.h"

using namespace fk::orchestrator;
using fk::orchestrator::testing::ExecutorHarness;
using fk::orchestrator::testing::read_text;
using S = SlurmState;

namespace {

FakeSlurmStep step(S state, std::string reason = "None", int polls = 1) {
  FakeSlurmStep s;
  s.state = state;
  s.reason = std::move(reason);
  s.polls = polls;
  return s;
}
FakeSlurmStep ended(S state, int exit_code, int signal = 0) {
  FakeSlurmStep s = step(state);
  s.exit_code = exit_code;
  s.signal = signal;
  return s;
}
FakeSlurmStep requeue(S state = S::kPending, std::string reason = "BeginTime") {
  FakeSlurmStep s = step(state, std::move(reason));
  s.requeue = true;
  return s;
}

}  // namespace

TEST(SlurmExecutor, CompletedIsSucceededAndTheScriptCarriesTheRequest) {
  ExecutorHarness h;
  LaunchRequest r = h.request("llama.tp2.a1", 4, 600);
  r.heartbeat = "head:4242";
  r.heartbeat_interval_s = 0.5;
  r.runner_args = {"--force"};
  const AttemptResult res = h.run(r);
  EXPECT_EQ(res.end, AttemptEnd::kSucceeded) << res.reason;
  EXPECT_EQ(res.exit_code, 0);
  EXPECT_EQ(res.attempt_id, "llama.tp2.a1");
  EXPECT_EQ(res.native_id, "1000");
  ASSERT_EQ(h.fake->submitted().size(), 1u);
  const std::string script = h.fake->submitted()[0].script;
  EXPECT_NE(script.find("#SBATCH --ntasks=4\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --time=0:10:00\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --job-name=fk-llama.tp2.a1\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --requeue\n"), std::string::npos) << script;
  EXPECT_NE(script.find("srun --mpi=pmix --ntasks=4 --kill-on-bad-exit=1 /bin/sh -c"), std::string::npos) << script;
  EXPECT_NE(script.find("/ranks /opt/fk/bin/fk-runner --jobs"), std::string::npos) << script;
  EXPECT_NE(script.find("--only llama --attempt llama.tp2.a1 --heartbeat head:4242 --heartbeat-interval 0.5 --force"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("SLURM_RESTART_COUNT"), std::string::npos);
  // The script is kept in the attempt folder, next to what the "script" wrote.
  const AttemptFiles files{h.executor->attempt_dir(r)};
  EXPECT_EQ(read_text(files.script()), script);
  EXPECT_EQ(read_text(files.exit_code()), "0 0 1000 0\n");
}

TEST(SlurmExecutor, CampaignSlurmSettingsBecomeDirectives) {
  ExecutorHarness h;
  h.options.script.slurm.partition = "gpu";
  h.options.script.slurm.account = "kernels";
  h.options.script.slurm.qos = "nightly";
  h.options.script.slurm.nodes = 2;
  h.options.script.slurm.gpus_per_node = 8;
  h.options.script.slurm.sbatch_args = {"--exclusive", "--constraint=h200"};
  h.options.script.requeue = false;
  h.run(h.request());
  const std::string script = h.fake->submitted().at(0).script;
  for (const char* line : {"#SBATCH --partition=gpu\n", "#SBATCH --account=kernels\n", "#SBATCH --qos=nightly\n",
                           "#SBATCH --nodes=2\n", "#SBATCH --gpus-per-node=8\n", "#SBATCH --exclusive\n",
                           "#SBATCH --constraint=h200\n", "#SBATCH --no-requeue\n"})
    EXPECT_NE(script.find(line), std::string::npos) << line << " missing in\n" << script;
}

TEST(SlurmExecutor, FailedCarriesTheExitCode) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning), ended(S::kFailed, 3)});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_EQ(res.exit_code, 3);
  EXPECT_NE(res.reason.find("fk-runner exited 3"), std::string::npos) << res.reason;
}

TEST(SlurmExecutor, FailedBySignalNamesIt) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning), ended(S::kFailed, -1, 11)});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_EQ(res.signal, 11);
  EXPECT_NE(res.reason.find("SIGSEGV"), std::string::npos) << res.reason;
}

TEST(SlurmExecutor, OutOfMemoryIsFailed) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning), ended(S::kOutOfMemory, 0, 9)});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_NE(res.reason.find("out of memory"), std::string::npos) << res.reason;
}

TEST(SlurmExecutor, SlurmTimeoutIsTimedOut) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning, "None", 3), ended(S::kTimeout, 0, 15)});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kTimedOut);
  EXPECT_NE(res.reason.find("Slurm time limit"), std::string::npos) << res.reason;
  EXPECT_TRUE(h.fake->cancelled().empty());
}

TEST(SlurmExecutor, DeadlineIsTimedOut) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning), ended(S::kDeadline, 0)});
  EXPECT_EQ(h.run(h.request()).end, AttemptEnd::kTimedOut);
}

TEST(SlurmExecutor, OwnTimeLimitCancelsAJobSlurmLetsRun) {
  ExecutorHarness h;
  h.options.policy.time_limit_grace_s = 5;
  h.fake->plan({step(S::kRunning)});  // runs for ever
  const AttemptResult res = h.run(h.request("job1.a1", 2, 10));
  EXPECT_EQ(res.end, AttemptEnd::kTimedOut);
  EXPECT_NE(res.reason.find("time limit of 10 s"), std::string::npos) << res.reason;
  ASSERT_EQ(h.fake->cancelled().size(), 1u);
  EXPECT_EQ(h.fake->cancelled()[0], "1000");
  // It ran (fake seconds) at least limit + grace before the executor stepped in.
  EXPECT_GE(res.seconds, 15);
}

TEST(SlurmExecutor, NegativeGraceLeavesTimeLimitsToSlurm) {
  ExecutorHarness h;
  h.options.policy.time_limit_grace_s = -1;
  h.fake->plan({step(S::kRunning, "None", 50), ended(S::kTimeout, 0, 15)});
  const AttemptResult res = h.run(h.request("job1.a1", 2, 10));
  EXPECT_EQ(res.end, AttemptEnd::kTimedOut);
  EXPECT_TRUE(h.fake->cancelled().empty());
}

TEST(SlurmExecutor, TimeLimitCountsRunningTimeNotQueueTime) {
  ExecutorHarness h;
  h.options.policy.time_limit_grace_s = 0;
  h.fake->plan({step(S::kPending, "Resources", 30), step(S::kRunning, "None", 5), ended(S::kCompleted, 0)});
  EXPECT_EQ(h.run(h.request("job1.a1", 2, 10)).end, AttemptEnd::kSucceeded);
}

TEST(SlurmExecutor, CancelledOutsideFkIsCancelled) {
  ExecutorHarness h;
  FakeSlurmStep c = ended(S::kCancelled, 0, 15);
  h.fake->plan({step(S::kRunning), c});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kCancelled);
  EXPECT_NE(res.reason.find("outside fk"), std::string::npos) << res.reason;
}

TEST(SlurmExecutor, CancelWhileRunningScancelsAndReportsCancelled) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning)});
  std::optional<AttemptResult> res;
  int calls = 0;
  h.start().launch(h.request(), [&](const AttemptResult& r) {
    res = r;
    ++calls;
  });
  ASSERT_TRUE(h.run_until([&] { return h.executor->attempt_started("job1.a1"); }));
  h.executor->cancel("job1.a1");
  h.executor->cancel("job1.a1");  // twice: still one scancel, one done
  ASSERT_TRUE(h.run_until([&] { return res.has_value(); }));
  h.io.run_for(std::chrono::milliseconds(20));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(res->end, AttemptEnd::kCancelled);
  EXPECT_EQ(h.fake->cancelled(), std::vector<std::string>{"1000"});
  h.executor->cancel("job1.a1");  // after the end: nothing happens
  h.io.run_for(std::chrono::milliseconds(20));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(h.fake->cancelled().size(), 1u);
  // The script's TERM trap wrote the exit code file.
  const auto exit = exit_record_read(AttemptFiles{h.executor->attempt_dir(h.request())});
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->terminated);
}

TEST(SlurmExecutor, CancelBeforeSbatchAnsweredStillCancelsTheJob) {
  ExecutorHarness h;
  h.fake->plan({step(S::kPending, "Priority", 1000)});
  ExecutorHarness* hp = &h;
  const AttemptResult res = h.run(h.request(), [hp] { hp->executor->cancel("job1.a1"); });
  EXPECT_EQ(res.end, AttemptEnd::kCancelled);
  EXPECT_EQ(h.fake->cancelled(), std::vector<std::string>{"1000"});
}

TEST(SlurmExecutor, NodeFailBootFailAndPreemptionAreNodeFailures) {
  for (S state : {S::kNodeFail, S::kBootFail, S::kPreempted}) {
    ExecutorHarness h;
    h.fake->plan({step(S::kRunning), ended(state, 0, 9)});
    const AttemptResult res = h.run(h.request());
    EXPECT_EQ(res.end, AttemptEnd::kNodeFailure) << slurm_state_name(state);
    EXPECT_NE(res.reason.find(std::string(slurm_state_name(state))), std::string::npos) << res.reason;
  }
}

TEST(SlurmExecutor, RevokedIsLost) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning), ended(S::kRevoked, 0)});
  EXPECT_EQ(h.run(h.request()).end, AttemptEnd::kLost);
}

TEST(SlurmExecutor, NodeFailureRequeueIsFollowedAndNoted) {
  ExecutorHarness h;
  // Running, node fails, Slurm requeues (restart count 1), it runs again and completes.
  h.fake->plan({step(S::kRunning), requeue(S::kRequeued, "NodeDown"), step(S::kPending, "BeginTime", 3),
                step(S::kRunning), ended(S::kCompleted, 0)});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kSucceeded) << res.reason;
  EXPECT_NE(res.reason.find("requeued 1 time by Slurm (SLURM_RESTART_COUNT=1)"), std::string::npos) << res.reason;
  const auto start = start_record_read(AttemptFiles{h.executor->attempt_dir(h.request())});
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(start->runs, 2);
  EXPECT_EQ(start->restarts, 1);
}

TEST(SlurmExecutor, TwoRequeuesThenFailureKeepTheCount) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning), requeue(), step(S::kRunning), requeue(), step(S::kRunning), ended(S::kFailed, 4)});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_EQ(res.exit_code, 4);
  EXPECT_NE(res.reason.find("requeued 2 times"), std::string::npos) << res.reason;
}

TEST(SlurmExecutor, StuckPendingReasonIsCancelledAfterTheLimit) {
  ExecutorHarness h;
  h.options.policy.stuck_pending_limit_s = 30;
  h.fake->plan({step(S::kPending, "PartitionDown")});  // for ever
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_NE(res.reason.find("PartitionDown"), std::string::npos) << res.reason;
  EXPECT_NE(res.reason.find("administrator"), std::string::npos) << res.reason;
  EXPECT_EQ(h.fake->cancelled(), std::vector<std::string>{"1000"});
  EXPECT_GE(res.seconds, 30);
  EXPECT_LT(res.seconds, 40);
  EXPECT_FALSE(h.executor->attempt_started("job1.a1"));
}

TEST(SlurmExecutor, ReqNodeNotAvailBeyondTheLimitIsCancelled) {
  ExecutorHarness h;
  h.options.policy.stuck_pending_limit_s = 20;
  h.fake->plan({step(S::kPending, "ReqNodeNotAvail, UnavailableNodes:gpu[01-04]")});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_NE(res.reason.find("ReqNodeNotAvail"), std::string::npos) << res.reason;
}

TEST(SlurmExecutor, HopelessPendingReasonIsCancelledSooner) {
  ExecutorHarness h;
  h.options.policy.hopeless_pending_limit_s = 5;
  h.options.policy.stuck_pending_limit_s = 1000;
  h.fake->plan({step(S::kPending, "PartitionTimeLimit")});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_NE(res.reason.find("can never run as submitted"), std::string::npos) << res.reason;
  EXPECT_LT(res.seconds, 10);
}

TEST(SlurmExecutor, AssociationLimitsAreStuckOrHopeless) {
  ExecutorHarness h;
  h.options.policy.stuck_pending_limit_s = 10;
  h.options.policy.hopeless_pending_limit_s = 1000;
  h.fake->plan({step(S::kPending, "AssocGrpGRES")});
  EXPECT_EQ(h.run(h.request()).end, AttemptEnd::kFailed);
}

TEST(SlurmExecutor, NormalQueueingIsNeverCancelled) {
  ExecutorHarness h;
  h.options.policy.stuck_pending_limit_s = 10;
  h.options.policy.hopeless_pending_limit_s = 10;
  h.fake->plan({step(S::kPending, "Priority", 40), step(S::kPending, "Resources", 40),
                step(S::kPending, "QOSMaxJobsPerUserLimit", 40), step(S::kRunning), ended(S::kCompleted, 0)});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kSucceeded) << res.reason;
  EXPECT_TRUE(h.fake->cancelled().empty());
}

TEST(SlurmExecutor, StuckClockRestartsWhenTheReasonClears) {
  ExecutorHarness h;
  h.options.policy.stuck_pending_limit_s = 10;
  h.fake->plan({step(S::kPending, "NodeDown", 8), step(S::kPending, "Resources", 2), step(S::kPending, "NodeDown", 8),
                step(S::kRunning), ended(S::kCompleted, 0)});
  EXPECT_EQ(h.run(h.request()).end, AttemptEnd::kSucceeded);
}

TEST(SlurmExecutor, OverallPendingLimitCatchesEvenNormalQueueing) {
  ExecutorHarness h;
  h.options.policy.pending_limit_s = 25;
  h.fake->plan({step(S::kPending, "Priority")});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_NE(res.reason.find("limit 25 s"), std::string::npos) << res.reason;
}

TEST(SlurmExecutor, HeldAfterRequeueIsStuck) {
  ExecutorHarness h;
  h.options.policy.stuck_pending_limit_s = 10;
  h.fake->plan({step(S::kRunning), requeue(S::kRequeueHold, "launch failed requeued held")});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_NE(res.reason.find("launch failed requeued held"), std::string::npos) << res.reason;
  EXPECT_NE(res.reason.find("requeued 1 time"), std::string::npos) << res.reason;
}

TEST(SlurmExecutor, WithoutSacctTheExitCodeFileDecides) {
  ExecutorHarness h;
  h.fake->set_accounting(false);
  h.fake->set_squeue_keeps(0);  // gone from squeue before any poll sees it end
  h.fake->plan({step(S::kRunning), ended(S::kFailed, 3)});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_EQ(res.exit_code, 3);
  EXPECT_NE(res.reason.find("exit_code file"), std::string::npos) << res.reason;
  EXPECT_NE(res.reason.find("sacct is unavailable"), std::string::npos) << res.reason;
}

TEST(SlurmExecutor, WithoutSacctSuccessIsStillKnown) {
  ExecutorHarness h;
  h.fake->set_accounting(false);
  h.fake->set_squeue_keeps(0);
  h.fake->plan({step(S::kPending, "Priority"), step(S::kRunning), ended(S::kCompleted, 0)});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kSucceeded) << res.reason;
  EXPECT_EQ(res.exit_code, 0);
}

TEST(SlurmExecutor, WithSacctAPurgedJobIsLookedUpThere) {
  ExecutorHarness h;
  h.fake->set_squeue_keeps(0);
  FakeSlurmStep f = ended(S::kFailed, 5);
  f.exit_file = false;  // only sacct can tell
  h.fake->plan({step(S::kRunning), f});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_EQ(res.exit_code, 5);
}

TEST(SlurmExecutor, WithoutSacctOrExitFileTheAttemptIsLost) {
  ExecutorHarness h;
  h.options.policy.missing_polls = 3;
  h.fake->set_accounting(false);
  h.fake->set_squeue_keeps(0);
  FakeSlurmStep f = ended(S::kNodeFail, 0, 9);
  f.exit_file = false;  // the node died with the script
  h.fake->plan({step(S::kRunning), f});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kLost);
  EXPECT_NE(res.reason.find("ran (on fakenode)"), std::string::npos) << res.reason;
  EXPECT_GE(h.fake->queries(), 4);  // it waited `missing_polls` polls before deciding
}

TEST(SlurmExecutor, StaleExitFileFromBeforeARequeueIsIgnored) {
  ExecutorHarness h;
  h.options.policy.missing_polls = 2;
  h.fake->set_accounting(false);
  h.fake->set_squeue_keeps(0);
  // Run 0 is requeued (its TERM trap writes "143 0 <id> 1"); run 1 ends with no exit file.
  FakeSlurmStep f = ended(S::kNodeFail, 0, 9);
  f.exit_file = false;
  h.fake->plan({step(S::kRunning), requeue(), step(S::kRunning), f});
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kLost) << "a stale exit code must not decide: " << res.reason;
}

TEST(SlurmExecutor, WithoutSacctTheTermFlagTellsCancellationFromFailure) {
  ExecutorHarness h;
  h.fake->set_accounting(false);
  h.fake->set_squeue_keeps(0);
  h.fake->plan({step(S::kRunning), ended(S::kFailed, 139)});  // a rank died of SIGSEGV on its own
  FakeSlurmStep c = ended(S::kCancelled, 143, 15);
  c.terminated = true;  // the script's TERM trap fired: someone ran scancel
  h.fake->plan({step(S::kRunning), c});
  const AttemptResult plain = h.run(h.request("a.a1"));
  EXPECT_EQ(plain.end, AttemptEnd::kFailed) << plain.reason;
  EXPECT_EQ(plain.exit_code, 139);
  const AttemptResult term = h.run(h.request("b.a1"));
  EXPECT_EQ(term.end, AttemptEnd::kCancelled) << term.reason;
  EXPECT_NE(term.reason.find("SIGTERM outside fk"), std::string::npos) << term.reason;
}

TEST(SlurmExecutor, UnreachableControllerIsToleratedThenLost) {
  {
    ExecutorHarness h;
    h.fake->fail_queries(5, "squeue: Unable to contact slurm controller (connect failure)");
    const AttemptResult res = h.run(h.request());
    EXPECT_EQ(res.end, AttemptEnd::kSucceeded) << res.reason;
  }
  {
    ExecutorHarness h;
    h.options.policy.unreachable_limit_s = 10;
    h.fake->plan({step(S::kRunning)});
    h.fake->fail_queries(1000, "squeue: Unable to contact slurm controller (connect failure)");
    const AttemptResult res = h.run(h.request());
    EXPECT_EQ(res.end, AttemptEnd::kLost);
    EXPECT_NE(res.reason.find("cannot reach Slurm"), std::string::npos) << res.reason;
    EXPECT_NE(res.reason.find("Unable to contact slurm controller"), std::string::npos) << res.reason;
    EXPECT_EQ(h.fake->cancelled(), std::vector<std::string>{"1000"}) << "best-effort scancel";
  }
}

TEST(SlurmExecutor, RefusedSubmissionIsFailedWithSbatchsWords) {
  ExecutorHarness h;
  h.fake->fail_submits(1, "sbatch: error: Batch job submission failed: Invalid partition name specified", false);
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_EQ(res.exit_code, -1);
  EXPECT_NE(res.reason.find("Invalid partition name specified"), std::string::npos) << res.reason;
  EXPECT_TRUE(h.fake->submitted().empty());
  EXPECT_TRUE(h.executor->running().empty());
}

TEST(SlurmExecutor, TransientSubmissionFailuresAreRetried) {
  ExecutorHarness h;
  h.options.submit_retries = 3;
  h.fake->fail_submits(2, "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation", true);
  const AttemptResult res = h.run(h.request());
  EXPECT_EQ(res.end, AttemptEnd::kSucceeded) << res.reason;
  EXPECT_EQ(h.fake->submitted().size(), 1u);

  ExecutorHarness g;
  g.options.submit_retries = 1;
  g.fake->fail_submits(5, "sbatch: error: Socket timed out on send/recv operation", true);
  const AttemptResult gave_up = g.run(g.request());
  EXPECT_EQ(gave_up.end, AttemptEnd::kFailed);
  EXPECT_NE(gave_up.reason.find("2 tries"), std::string::npos) << gave_up.reason;
}

TEST(SlurmExecutor, RunningListsSlurmJobIdsAndStartedFollowsTheQueue) {
  ExecutorHarness h;
  h.fake->plan({step(S::kPending, "Priority", 5), step(S::kRunning, "None", 5), ended(S::kCompleted, 0)});
  std::optional<AttemptResult> res;
  h.start().launch(h.request(), [&](const AttemptResult& r) { res = r; });
  ASSERT_TRUE(h.run_until([&] { return !h.executor->running().empty(); }));
  EXPECT_EQ(h.executor->running(), (std::vector<std::pair<std::string, std::string>>{{"job1.a1", "1000"}}));
  EXPECT_FALSE(h.executor->attempt_started("job1.a1")) << "pending: not started";
  ASSERT_TRUE(h.run_until([&] { return h.executor->attempt_started("job1.a1"); }));
  ASSERT_TRUE(h.run_until([&] { return res.has_value(); }));
  EXPECT_TRUE(h.executor->running().empty());
  EXPECT_FALSE(h.executor->attempt_started("job1.a1"));
}

TEST(SlurmExecutor, OneQueryPerPollCoversEveryAttempt) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning, "None", 3), ended(S::kCompleted, 0)});
  h.fake->plan({step(S::kRunning, "None", 3), ended(S::kFailed, 1)});
  std::map<std::string, AttemptResult> results;
  h.start().launch(h.request("a.a1"), [&](const AttemptResult& r) { results[r.attempt_id] = r; });
  h.executor->launch(h.request("b.a1"), [&](const AttemptResult& r) { results[r.attempt_id] = r; });
  ASSERT_TRUE(h.run_until([&] { return results.size() == 2; }));
  EXPECT_EQ(results["a.a1"].end, AttemptEnd::kSucceeded);
  EXPECT_EQ(results["b.a1"].end, AttemptEnd::kFailed);
  bool both = false;
  for (const auto& ids : h.fake->queried()) both = both || ids.size() == 2;
  EXPECT_TRUE(both) << "attempts in flight together are asked about in one squeue call";
}

TEST(SlurmExecutor, UnknownStateIsFollowedLikeRunning) {
  ExecutorHarness h;
  h.fake->plan({step(S::kUnknown, "None", 3), ended(S::kCompleted, 0)});
  EXPECT_EQ(h.run(h.request()).end, AttemptEnd::kSucceeded);
}

TEST(SlurmExecutor, DestroyingTheExecutorCancelsItsJobs) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning)});
  bool called = false;
  h.start().launch(h.request(), [&](const AttemptResult&) { called = true; });
  ASSERT_TRUE(h.run_until([&] { return !h.executor->running().empty(); }));
  h.executor.reset();
  h.io.run_for(std::chrono::milliseconds(20));
  EXPECT_EQ(h.fake->cancelled(), std::vector<std::string>{"1000"});
  EXPECT_FALSE(called) << "no callback after the executor is gone";
}

TEST(SlurmExecutor, LaunchingTheSameAttemptTwiceIsABug) {
  ExecutorHarness h;
  h.fake->plan({step(S::kRunning)});
  h.start().launch(h.request(), [](const AttemptResult&) {});
  EXPECT_THROW(h.executor->launch(h.request(), [](const AttemptResult&) {}), fk::Error);
}

TEST(SlurmExecutor, BadTemplateIsRefusedAtConstruction) {
  ExecutorHarness h;
  std::ofstream(h.dir + "/bad.sbatch") << "#!/bin/bash\n#SBATCH --ntasks={{ntasks}}\n{{srun_sh}} {{no_such_thing}}\n";
  h.options.template_file = h.dir + "/bad.sbatch";
  try {
    h.start();
    FAIL() << "a template with an unknown placeholder was accepted";
  } catch (const fk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.sbatch:3: unknown placeholder {{no_such_thing}}"), std::string::npos)
        << e.what();
  }
  h.options.template_file = h.dir + "/missing.sbatch";
  EXPECT_THROW(h.start(), fk::Error);
}
