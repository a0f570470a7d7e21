// The Slurm executor against a real Slurm (ctest label `slurm`): the single-node
// cluster of slurm/start-slurm.sh, through sbatch/squeue/scancel/scontrol. Stub
// runners (small bash scripts) make outcomes exact; one test runs the real fk-runner
// under srun --mpi=pmix. Every test FAILS when Slurm is not running — CI (.ci/run)
// starts it first; by hand: sudo slurm/start-slurm.sh.
#include "executor_harness.h"

#include "core/spec/spec_file.h"
#include "core/subprocess.h"
#include "orchestrator/plan.h"
#include "orchestrator/run.h"
#include "orchestrator/slurm/attempt_files.h"
#include "orchestrator/slurm/slurm_cli_client.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

using namespace fk;
using namespace fk::orchestrator;
using fk::orchestrator::testing::fresh_dir;
using fk::orchestrator::testing::read_text;

namespace {

SubprocessResult sh(const std::vector<std::string>& argv, double timeout_s = 30) {
  SubprocessOptions o;
  o.timeout_s = timeout_s;
  return subprocess_run(argv, o);
}

std::string squeue_state(const std::string& job_id) {
  const auto r = sh({"squeue", "--noheader", "--states=all", "--jobs=" + job_id, "--format=%T"});
  std::string s = r.output;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Hides finished jobs and sacct, as a cluster does MinJobAge after the end with no
// accounting database: only the attempt's exit_code file can tell.
class ForgetfulClient final : public SlurmClient {
 public:
  explicit ForgetfulClient(std::shared_ptr<SlurmClient> inner) : inner_(std::move(inner)) {}
  SlurmSubmitResult submit(const SlurmSubmit& s) override { return inner_->submit(s); }
  std::string cancel(const std::string& id) override { return inner_->cancel(id); }
  SlurmQuery query(const std::vector<std::string>& ids) override {
    SlurmQuery q = inner_->query(ids);
    for (auto it = q.jobs.begin(); it != q.jobs.end();)
      it = slurm_state_final(it->second.state) ? q.jobs.erase(it) : std::next(it);
    q.accounting = false;
    return q;
  }

 private:
  std::shared_ptr<SlurmClient> inner_;
};

class RealSlurm : public ::testing::Test {
 protected:
  void SetUp() override {
    // A node still "completing" the previous test's job (Slurm kills its processes and
    // runs the epilog, up to KillWait) takes none yet: wait for it, a minute at most.
    auto usable = [](const SubprocessResult& q) {
      return q.ok() && (q.output.find("idle") != std::string::npos || q.output.find("mixed") != std::string::npos ||
                        q.output.find("alloc") != std::string::npos);
    };
    SubprocessResult r = sh({"sinfo", "--noheader", "--partition=debug", "--format=%T"});
    for (int i = 0; i < 120 && r.ok() && !usable(r) && r.output.find("completing") != std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      r = sh({"sinfo", "--noheader", "--partition=debug", "--format=%T"});
    }
    ASSERT_TRUE(usable(r))
        << "Slurm is not running (sinfo: " << r.describe() << ", '" << r.output
        << "'): start the test cluster with slurm/start-slurm.sh (as root); CI does it in .ci/run";
    dir_ = fresh_dir("real");
  }

  // An executable bash script standing in for fk-runner (it ignores its arguments).
  std::string stub(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/bash\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }

  SlurmExecutorOptions options(const std::string& runner) {
    SlurmExecutorOptions o;
    o.poll_interval_s = 0.3;
    o.template_file = std::string(FK_SOURCE_DIR) + "/slurm/templates/attempt.sbatch";
    o.attempts_dir = dir_ + "/attempts";
    o.script.runner = runner;
    o.policy.time_limit_grace_s = 0;
    return o;
  }

  LaunchRequest request(const std::string& attempt, int ranks = 1, double time_limit_s = 120) {
    LaunchRequest r;
    r.attempt_id = attempt;
    r.job_ids = {attempt.substr(0, attempt.find('.'))};
    r.jobs_file = dir_ + "/jobs.json";
    r.results_dir = dir_ + "/results";
    r.ranks = ranks;
    r.time_limit_s = time_limit_s;
    r.log_file = dir_ + "/logs/" + attempt + ".log";
    return r;
  }

  // Runs one attempt to its end (at most `limit_s`), calling `tick` between turns of
  // the io_context while it runs.
  AttemptResult run(SlurmExecutorOptions o, const LaunchRequest& r,
                    const std::function<void(SlurmExecutor&)>& tick = {}, double limit_s = 120,
                    std::shared_ptr<SlurmClient> client = std::make_shared<SlurmCliClient>()) {
    boost::asio::io_context io;
    SlurmExecutor ex(io, client, std::move(o));
    std::optional<AttemptResult> result;
    int calls = 0;
    ex.launch(r, [&](const AttemptResult& res) {
      result = res;
      ++calls;
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
    while (!result && std::chrono::steady_clock::now() < deadline) {
      io.run_for(std::chrono::milliseconds(50));
      if (io.stopped()) io.restart();
      if (tick && !result) tick(ex);
    }
    io.run_for(std::chrono::milliseconds(50));
    EXPECT_EQ(calls, 1);
    if (!result) {
      ADD_FAILURE() << "attempt " << r.attempt_id << " did not end within " << limit_s << " s";
      return {};
    }
    return *result;
  }

  std::string dir_;
};

}  // namespace

TEST_F(RealSlurm, AttemptSucceedsOnEveryRank) {
  const std::string runner = stub("ok.sh", "echo \"rank ${SLURM_PROCID} restart ${FK_RESTART_COUNT} args $*\" > \"" +
                                               dir_ + "/rank.${SLURM_PROCID}\"; exit 0");
  const LaunchRequest r = request("ok.a1", 2);
  const AttemptResult res = run(options(runner), r);
  EXPECT_EQ(res.end, AttemptEnd::kSucceeded) << res.reason;
  EXPECT_EQ(res.exit_code, 0);
  ASSERT_FALSE(res.native_id.empty());
  EXPECT_EQ(res.native_id.find_first_not_of("0123456789"), std::string::npos) << res.native_id;
  for (const char* rank : {"rank.0", "rank.1"}) {
    const std::string text = read_text(dir_ + "/" + rank);
    EXPECT_NE(text.find("restart 0 args --jobs " + dir_ + "/jobs.json --results " + dir_ +
                        "/results --only ok --attempt ok.a1"),
              std::string::npos)
        << rank << ": " << text;
  }
  const AttemptFiles files{dir_ + "/attempts/ok.a1"};
  EXPECT_EQ(read_text(files.exit_code()), "0 0 " + res.native_id + " 0\n");
  const auto start = start_record_read(files);
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(start->job_id, res.native_id);
  EXPECT_NE(read_text(r.log_file).find("# attempt ok.a1: Slurm job " + res.native_id), std::string::npos);
}

TEST_F(RealSlurm, FailingAttemptReportsItsExitCode) {
  const AttemptResult res = run(options(stub("fail.sh", "exit 3")), request("fail.a1", 2));
  EXPECT_EQ(res.end, AttemptEnd::kFailed) << res.reason;
  EXPECT_EQ(res.exit_code, 3);
  EXPECT_NE(res.reason.find("fk-runner exited 3"), std::string::npos) << res.reason;
  EXPECT_EQ(squeue_state(res.native_id), "FAILED");
}

TEST_F(RealSlurm, ExitCodeFileTellsTheEndWhenSlurmForgot) {
  const AttemptResult res = run(options(stub("fail.sh", "exit 7")), request("forgot.a1"), {}, 120,
                                std::make_shared<ForgetfulClient>(std::make_shared<SlurmCliClient>()));
  EXPECT_EQ(res.end, AttemptEnd::kFailed) << res.reason;
  EXPECT_EQ(res.exit_code, 7);
  EXPECT_NE(res.reason.find("exit_code file"), std::string::npos) << res.reason;
}

// The fault a CI run met: a restarted test cluster hands out job ids from 1 again, a
// PMIx directory a killed step of an earlier cluster left in /tmp has the next job's
// name, the step fails to launch — and srun returns 0. The attempt must not succeed.
TEST_F(RealSlurm, StepThatFailsToLaunchIsANodeFailureNotASuccess) {
  const auto config = sh({"scontrol", "show", "config"});
  ASSERT_TRUE(config.ok()) << config.describe();
  const size_t at = config.output.find("NEXT_JOB_ID");
  ASSERT_NE(at, std::string::npos) << config.output;
  const std::string next = config.output.substr(at, config.output.find('\n', at) - at);
  const std::string job_id = next.substr(next.find_last_of(" =") + 1);
  const std::string stale = fmt::format("/tmp/spmix_appdir_{}_{}.0", getuid(), job_id);
  std::filesystem::create_directories(stale);
  const AttemptResult res = run(options(stub("ok.sh", "exit 0")), request("nolaunch.a1"));
  std::filesystem::remove_all(stale);
  ASSERT_EQ(res.native_id, job_id) << "another job took the id: the test cluster is not idle";
  EXPECT_EQ(res.end, AttemptEnd::kNodeFailure) << res.reason;
  EXPECT_NE(res.reason.find("the job step did not launch"), std::string::npos) << res.reason;
  EXPECT_EQ(res.exit_code, kSlurmStepNotLaunchedExit);
  const std::string log = read_text(dir_ + "/logs/nolaunch.a1.log");
  EXPECT_NE(log.find("launch failed"), std::string::npos) << log;
  EXPECT_NE(log.find("0 of 1 rank(s) started"), std::string::npos) << log;
}

TEST_F(RealSlurm, CancelStopsARunningJob) {
  bool cancelled = false;
  const AttemptResult res =
      run(options(stub("sleep.sh", "sleep 300")), request("cancel.a1", 2), [&](SlurmExecutor& ex) {
        if (!cancelled && ex.attempt_started("cancel.a1")) {
          ex.cancel("cancel.a1");
          cancelled = true;
        }
      });
  EXPECT_TRUE(cancelled);
  EXPECT_EQ(res.end, AttemptEnd::kCancelled) << res.reason;
  EXPECT_LT(res.seconds, 60);
  EXPECT_EQ(squeue_state(res.native_id), "CANCELLED");
}

TEST_F(RealSlurm, OwnTimeLimitStopsAnOverrunningJob) {
  const AttemptResult res = run(options(stub("sleep.sh", "sleep 300")), request("limit.a1", 1, 3));
  EXPECT_EQ(res.end, AttemptEnd::kTimedOut) << res.reason;
  EXPECT_NE(res.reason.find("time limit of 3 s"), std::string::npos) << res.reason;
  EXPECT_LT(res.seconds, 60);
  EXPECT_EQ(squeue_state(res.native_id), "CANCELLED");
}

TEST_F(RealSlurm, SlurmTimeLimitIsTimedOut) {
  SlurmExecutorOptions o = options(stub("sleep.sh", "sleep 300"));
  o.policy.time_limit_grace_s = -1;  // Slurm's --time alone (one minute: its resolution)
  const AttemptResult res = run(o, request("slurmlimit.a1", 1, 20), {}, 240);
  EXPECT_EQ(res.end, AttemptEnd::kTimedOut) << res.reason;
  EXPECT_NE(res.reason.find("Slurm time limit"), std::string::npos) << res.reason;
  EXPECT_GE(res.seconds, 55);
  EXPECT_EQ(squeue_state(res.native_id), "TIMEOUT");
}

TEST_F(RealSlurm, PendingReasonThatNeverClearsIsCancelled) {
  SlurmExecutorOptions o = options(stub("ok.sh", "exit 0"));
  o.script.slurm.partition = "down";  // State=DOWN: PartitionDown for ever
  o.policy.stuck_pending_limit_s = 3;
  const AttemptResult res = run(o, request("stuck.a1"));
  EXPECT_EQ(res.end, AttemptEnd::kFailed) << res.reason;
  EXPECT_NE(res.reason.find("PartitionDown"), std::string::npos) << res.reason;
  EXPECT_EQ(squeue_state(res.native_id), "CANCELLED");
}

TEST_F(RealSlurm, RefusedSubmissionIsFailedWithSbatchsMessage) {
  SlurmExecutorOptions o = options(stub("ok.sh", "exit 0"));
  o.script.slurm.partition = "no-such-partition";
  const AttemptResult res = run(o, request("refused.a1"));
  EXPECT_EQ(res.end, AttemptEnd::kFailed);
  EXPECT_NE(res.reason.find("invalid partition"), std::string::npos) << res.reason;
  EXPECT_TRUE(res.native_id.empty());
}

TEST_F(RealSlurm, RequeuedJobRunsAgainWithRestartCount) {
  // Run 0 waits; the test requeues it (as Slurm does after a node failure); run 1 sees
  // SLURM_RESTART_COUNT=1 and succeeds.
  const std::string runner = stub("requeue.sh",
                                  "if [ \"${SLURM_RESTART_COUNT:-0}\" = 0 ]; then sleep 300; fi\n"
                                  "echo \"restart ${FK_RESTART_COUNT}\" > \"" +
                                      dir_ + "/restart\"");
  std::string job;
  bool requeued = false;
  const AttemptResult res = run(
      options(runner), request("requeue.a1"),
      [&](SlurmExecutor& ex) {
        // Requeued once run 0's script has recorded its start (squeue may say RUNNING
        // before the batch script's first line has run).
        if (job.empty() && ex.attempt_started("requeue.a1") &&
            start_record_read(AttemptFiles{dir_ + "/attempts/requeue.a1"}).has_value()) {
          job = ex.running().at(0).second;
          EXPECT_TRUE(sh({"scontrol", "requeue", job}).ok());
          requeued = true;
        } else if (requeued && squeue_state(job) == "PENDING") {
          // Slurm holds requeued jobs back two minutes; no need to wait here.
          sh({"scontrol", "update", "JobId=" + job, "StartTime=now"});
        }
      },
      180);
  EXPECT_TRUE(requeued);
  EXPECT_EQ(res.end, AttemptEnd::kSucceeded) << res.reason;
  EXPECT_NE(res.reason.find("requeued 1 time by Slurm (SLURM_RESTART_COUNT=1)"), std::string::npos) << res.reason;
  EXPECT_EQ(read_text(dir_ + "/restart"), "restart 1\n");
  const auto start = start_record_read(AttemptFiles{dir_ + "/attempts/requeue.a1"});
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(start->runs, 2);
}

TEST_F(RealSlurm, RealRunnerRunsAJobUnderSrunPmix) {
  spec::Diagnostics diags;
  const auto campaign =
      spec::campaign_load_file(std::string(FK_SOURCE_DIR) + "/tests/slurm/slurm_campaign.yaml", diags);
  ASSERT_TRUE(campaign.has_value());
  const auto plan = plan_campaign(*campaign, diags);
  ASSERT_TRUE(plan.has_value());
  spec::job_file_write(dir_ + "/jobs.json", plan->job_file);
  const spec::Job* tp2 = nullptr;
  for (const auto& j : plan->job_file.jobs)
    if (j.layout.ranks() == 2) tp2 = &j;
  ASSERT_NE(tp2, nullptr);
  LaunchRequest r = request(tp2->id + ".a1", 2, 300);
  r.job_ids = {tp2->id};
  const AttemptResult res = run(options(FK_RUNNER_PATH), r, {}, 300);
  EXPECT_EQ(res.end, AttemptEnd::kSucceeded) << res.reason << "\n" << read_text(r.log_file);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/results/" + tp2->id + ".h5")) << read_text(r.log_file);
}

// The done-when of the Slurm executor: the smoke campaign through fk run's orchestrator
// and the Slurm executor on the real cluster, with one job whose first attempt fails
// (exit 3) and one whose first attempt an operator scancels; both succeed on retry.
TEST_F(RealSlurm, SmokeCampaignWithAFailureAndACancellationCompletes) {
  const std::string campaign_file = std::string(FK_SOURCE_DIR) + "/specs/campaigns/smoke.yaml";
  spec::Diagnostics diags;
  const auto campaign = spec::campaign_load_file(campaign_file, diags);
  ASSERT_TRUE(campaign.has_value());
  const auto plan = plan_campaign(*campaign, diags);
  ASSERT_TRUE(plan.has_value());
  const auto& jobs = plan->job_file.jobs;
  ASSERT_GE(jobs.size(), 4u);
  const std::string fail_job = jobs[1].id, cancel_job = jobs[2].id;
  // Stands in for fk-runner on those two first attempts, runs the real one otherwise.
  const std::string runner =
      stub("runner.sh",
           "attempt=; prev=\nfor a in \"$@\"; do [ \"$prev\" = --attempt ] && attempt=$a; prev=$a; done\n"
           "[ \"$attempt\" = " +
               fail_job +
               ".a1 ] && exit 3\n"
               "[ \"$attempt\" = " +
               cancel_job +
               ".a1 ] && exec sleep 300\n"
               "exec " FK_RUNNER_PATH " \"$@\"");
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 1);  // ranks share 2 cores: do not spin

  // The operator: scancel the cancel job's first attempt once it runs.
  std::atomic<bool> stop{false}, scancelled{false};
  std::thread operator_thread([&] {
    while (!stop && !scancelled) {
      const auto q = sh({"squeue", "--noheader", "--states=RUNNING", "--name=fk-" + cancel_job + ".a1", "--format=%i"});
      std::string id = q.output.substr(0, q.output.find('\n'));
      if (!id.empty()) scancelled = sh({"scancel", id}).ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  RunOptions o;
  o.campaign_file = campaign_file;
  o.results_dir = dir_ + "/smoke";
  o.executor = "slurm";
  o.plain = true;
  o.make_executor = [&](boost::asio::io_context& io) -> std::unique_ptr<Executor> {
    SlurmExecutorOptions so = options(runner);
    so.poll_interval_s = 0.5;
    // smoke.yaml's executor.slots (4) caps the ranks in flight: the node has 2 cores.
    auto ex = make_slurm_executor(io, campaign->executor, so);
    EXPECT_EQ(ex->capacity(), 4);
    return ex;
  };
  const int status = run_campaign(o);
  stop = true;
  operator_thread.join();
  EXPECT_TRUE(scancelled) << "the operator never saw " << cancel_job << ".a1 running";
  EXPECT_EQ(status, 0) << "every job done";
  for (const auto& j : jobs) EXPECT_TRUE(std::filesystem::exists(o.results_dir + "/" + j.id + ".h5")) << j.id;
  // The journal tells the story: a failure and a cancellation, each retried.
  const std::string journal = read_text(o.results_dir + "/.fk-journal.jsonl");
  auto has_line = [&](const std::vector<std::string>& parts) {
    std::istringstream in(journal);
    for (std::string line; std::getline(in, line);) {
      bool all = true;
      for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
      if (all) return true;
    }
    return false;
  };
  EXPECT_TRUE(has_line({"\"end\"", fail_job + ".a1", "\"failed\"", "\"exit_code\":3", "retry"})) << journal;
  EXPECT_TRUE(has_line({"\"end\"", cancel_job + ".a1", "\"cancelled\"", "retry"})) << journal;
  EXPECT_TRUE(has_line({"\"end\"", fail_job + ".a2", "\"succeeded\""})) << journal;
  EXPECT_TRUE(has_line({"\"end\"", cancel_job + ".a2", "\"succeeded\""})) << journal;
}
