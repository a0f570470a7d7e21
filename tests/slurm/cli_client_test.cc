// SlurmCliClient without a cluster: its command lines, and what it makes of Slurm's
// real output (captured from slurm-wlm 22.05) — errors, missing sacct and time-outs included.
#include "orchestrator/slurm/slurm_cli_client.h"

#include <gtest/gtest.h>

#include <deque>

using namespace fk;
using namespace fk::orchestrator;

namespace {

SubprocessResult exited(int code, std::string out, std::string err = "") {
  SubprocessResult r;
  r.started = true;
  r.exit_code = code;
  r.output = std::move(out);
  r.error_output = std::move(err);
  return r;
}

// Answers commands from a script of results and records what was run.
struct ScriptedCommands {
  std::deque<SubprocessResult> answers;
  std::vector<std::vector<std::string>> calls;
  std::vector<double> timeouts;
  SlurmCommandRunner runner() {
    return [this](const std::vector<std::string>& argv, const SubprocessOptions& o) {
      calls.push_back(argv);
      timeouts.push_back(o.timeout_s);
      if (answers.empty()) return exited(99, "", "unexpected command");
      SubprocessResult r = answers.front();
      answers.pop_front();
      return r;
    };
  }
};

bool has(const std::vector<std::string>& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

}  // namespace

TEST(SlurmParse, SqueueRowsAsSlurm2205PrintsThem) {
  const auto jobs = slurm_parse_squeue(
      "1|FAILED|NonZeroExitCode|768|0|\n"
      "3|PENDING|BeginTime|0|1|\n"
      "5|CANCELLED|None|15|0|\n"
      "6|PENDING|ReqNodeNotAvail, UnavailableNodes:vm|0|0|\n"
      "7|COMPLETED|None|0|2|\n"
      "garbage line\n");
  ASSERT_EQ(jobs.size(), 5u);
  EXPECT_EQ(jobs.at("1").state, SlurmState::kFailed);
  EXPECT_EQ(jobs.at("1").exit_code, 3);
  EXPECT_EQ(jobs.at("1").signal, 0);
  EXPECT_EQ(jobs.at("3").state, SlurmState::kPending);
  EXPECT_EQ(jobs.at("3").restarts, 1);
  EXPECT_EQ(jobs.at("3").exit_code, -1) << "no exit code before the end";
  EXPECT_EQ(jobs.at("5").signal, 15);
  EXPECT_EQ(jobs.at("6").reason, "ReqNodeNotAvail, UnavailableNodes:vm");
  EXPECT_EQ(jobs.at("7").exit_code, 0);
  EXPECT_EQ(jobs.at("7").restarts, 2);
  EXPECT_EQ(jobs.at("7").source, "squeue");
}

TEST(SlurmParse, SacctRowsSkipStepsAndReadExitColonSignal) {
  const auto jobs = slurm_parse_sacct(
      "12|CANCELLED by 0|0:15|None\n"
      "12.batch|CANCELLED|0:15|\n"
      "13|COMPLETED|0:0|None\n"
      "14|FAILED|3:0|NonZeroExitCode\n"
      "15|NODE_FAIL|0:0|None\n");
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs.at("12").state, SlurmState::kCancelled);
  EXPECT_EQ(jobs.at("12").state_text, "CANCELLED by 0");
  EXPECT_EQ(jobs.at("12").signal, 15);
  EXPECT_EQ(jobs.at("14").exit_code, 3);
  EXPECT_EQ(jobs.at("15").state, SlurmState::kNodeFail);
  EXPECT_EQ(jobs.at("13").source, "sacct");
}

TEST(SlurmParse, SbatchParsableOutput) {
  EXPECT_EQ(slurm_parse_sbatch("123\n"), "123");
  EXPECT_EQ(slurm_parse_sbatch("4567;cluster-a\n"), "4567");
  EXPECT_EQ(slurm_parse_sbatch("sbatch: error: something\n"), "");
  EXPECT_EQ(slurm_parse_sbatch(""), "");
}

TEST(SlurmCliClient, SubmitRunsSbatchParsableOnTheScript) {
  ScriptedCommands cmd;
  cmd.answers = {exited(0, "42\n")};
  SlurmCliOptions o;
  o.submit_timeout_s = 17;
  SlurmCliClient client(o, cmd.runner());
  const auto r = client.submit({"/shared/a/job.sbatch", "#!/bin/bash\n"});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.job_id, "42");
  ASSERT_EQ(cmd.calls.size(), 1u);
  EXPECT_EQ(cmd.calls[0], (std::vector<std::string>{"sbatch", "--parsable", "/shared/a/job.sbatch"}));
  EXPECT_EQ(cmd.timeouts[0], 17);
}

TEST(SlurmCliClient, SubmitErrorsSayWhatSbatchSaidAndWhetherToRetry) {
  ScriptedCommands cmd;
  SubprocessResult timeout = exited(-1, "");
  timeout.timed_out = true;
  timeout.seconds = 60;
  cmd.answers = {
      exited(1, "", "sbatch: error: Batch job submission failed: Invalid partition name specified\n"),
      exited(1, "",
             "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n"),
      timeout, exited(0, "Submitted batch job 12\n")};
  SlurmCliClient client({}, cmd.runner());
  const auto bad = client.submit({"/x/job.sbatch", ""});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.error.find("Invalid partition name specified"), std::string::npos) << bad.error;
  EXPECT_FALSE(bad.transient);
  const auto down = client.submit({"/x/job.sbatch", ""});
  EXPECT_TRUE(down.transient) << down.error;
  const auto slow = client.submit({"/x/job.sbatch", ""});
  EXPECT_TRUE(slow.transient);
  EXPECT_NE(slow.error.find("no answer"), std::string::npos) << slow.error;
  const auto odd = client.submit({"/x/job.sbatch", ""});
  EXPECT_FALSE(odd.ok()) << "without --parsable's bare id there is no job id to follow";
}

TEST(SlurmCliClient, QueryAsksSqueueForAllIdsAtOnce) {
  ScriptedCommands cmd;
  cmd.answers = {exited(0, "7|RUNNING|None|0|0|\n8|PENDING|Priority|0|0|\n")};
  SlurmCliClient client({}, cmd.runner());
  const SlurmQuery q = client.query({"7", "8"});
  ASSERT_TRUE(q.ok()) << q.error;
  EXPECT_EQ(q.jobs.size(), 2u);
  ASSERT_EQ(cmd.calls.size(), 1u) << "no sacct call when squeue knows every job";
  EXPECT_EQ(cmd.calls[0][0], "squeue");
  EXPECT_TRUE(has(cmd.calls[0], "--jobs=7,8"));
  EXPECT_TRUE(has(cmd.calls[0], "--states=all")) << "finished jobs too, until MinJobAge";
  EXPECT_TRUE(has(cmd.calls[0], kSlurmSqueueFormat));
}

TEST(SlurmCliClient, PurgedJobsAreLookedUpInSacct) {
  ScriptedCommands cmd;
  cmd.answers = {exited(0, "7|RUNNING|None|0|0|\n"), exited(0, "8|FAILED|2:0|None\n8.batch|FAILED|2:0|\n")};
  SlurmCliClient client({}, cmd.runner());
  const SlurmQuery q = client.query({"7", "8"});
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(cmd.calls.size(), 2u);
  EXPECT_EQ(cmd.calls[1][0], "sacct");
  EXPECT_TRUE(has(cmd.calls[1], "--jobs=8"));
  EXPECT_TRUE(has(cmd.calls[1], "--parsable2"));
  EXPECT_TRUE(q.accounting);
  EXPECT_EQ(q.jobs.at("8").exit_code, 2);
  EXPECT_EQ(q.jobs.at("8").source, "sacct");
}

TEST(SlurmCliClient, InvalidJobIdFromSqueueMeansUnknownNotError) {
  ScriptedCommands cmd;
  cmd.answers = {exited(1, "", "slurm_load_jobs error: Invalid job id specified\n"),
                 exited(1, "", "Slurm accounting storage is disabled\n")};
  SlurmCliClient client({}, cmd.runner());
  const SlurmQuery q = client.query({"99"});
  EXPECT_TRUE(q.ok()) << q.error;
  EXPECT_TRUE(q.jobs.empty());
  EXPECT_FALSE(q.accounting);
}

TEST(SlurmCliClient, DisabledAccountingIsRememberedAndNotAskedEveryPoll) {
  ScriptedCommands cmd;
  cmd.answers = {exited(0, ""), exited(1, "", "Slurm accounting storage is disabled\n"), exited(0, "")};
  SlurmCliClient client({}, cmd.runner());
  EXPECT_FALSE(client.query({"5"}).accounting);
  const SlurmQuery second = client.query({"5"});
  EXPECT_FALSE(second.accounting);
  EXPECT_TRUE(second.ok());
  EXPECT_EQ(cmd.calls.size(), 3u) << "the second query ran squeue only";
}

TEST(SlurmCliClient, MissingSacctBinaryMeansNoAccounting) {
  ScriptedCommands cmd;
  SubprocessResult missing;
  missing.started = false;
  missing.error = "sacct: No such file or directory";
  cmd.answers = {exited(0, ""), missing};
  SlurmCliClient client({}, cmd.runner());
  const SlurmQuery q = client.query({"5"});
  EXPECT_TRUE(q.ok());
  EXPECT_FALSE(q.accounting);
}

TEST(SlurmCliClient, PassingSacctFailureIsNoEvidence) {
  ScriptedCommands cmd;
  cmd.answers = {exited(0, ""), exited(1, "", "sacct: error: Something odd happened\n")};
  SlurmCliClient client({}, cmd.runner());
  const SlurmQuery q = client.query({"5"});
  EXPECT_TRUE(q.ok());
  EXPECT_TRUE(q.accounting);
  EXPECT_FALSE(q.complete);
}

TEST(SlurmCliClient, SqueueTimeoutIsAnError) {
  ScriptedCommands cmd;
  SubprocessResult hung = exited(-1, "");
  hung.timed_out = true;
  cmd.answers = {hung};
  SlurmCliOptions o;
  o.query_timeout_s = 3;
  SlurmCliClient client(o, cmd.runner());
  const SlurmQuery q = client.query({"5"});
  EXPECT_FALSE(q.ok());
  EXPECT_NE(q.error.find("squeue: no answer"), std::string::npos) << q.error;
  EXPECT_EQ(cmd.timeouts[0], 3);
}

TEST(SlurmCliClient, CancelToleratesJobsThatAlreadyEnded) {
  ScriptedCommands cmd;
  cmd.answers = {
      exited(0, ""), exited(1, "", "scancel: error: Kill job error on job id 5: Invalid job id specified\n"),
      exited(1, "", "scancel: error: Kill job error on job id 5: Job/step already completing or completed\n"),
      exited(1, "", "scancel: error: Unable to contact slurm controller\n")};
  SlurmCliClient client({}, cmd.runner());
  EXPECT_EQ(client.cancel("5"), "");
  EXPECT_EQ(cmd.calls[0], (std::vector<std::string>{"scancel", "5"}));
  EXPECT_EQ(client.cancel("5"), "");
  EXPECT_EQ(client.cancel("5"), "");
  EXPECT_NE(client.cancel("5").find("Unable to contact slurm controller"), std::string::npos);
}
