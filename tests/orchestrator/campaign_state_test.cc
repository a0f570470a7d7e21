// The campaign state machine and its policy: retries, giving up, drop-and-retry,
// and journal replay after a crash.
#include "orchestrator/campaign_state.h"

#include <gtest/gtest.h>

namespace fk::orchestrator {
namespace {

AttemptResult result(AttemptEnd end, int code = 0, int sig = 0) {
  AttemptResult r;
  r.end = end;
  r.exit_code = code;
  r.signal = sig;
  r.reason = "test";
  return r;
}

TEST(Policy, Decisions) {
  JobTrack plain;
  RetryPolicy p{2};
  EXPECT_EQ(decide(plain, result(AttemptEnd::kSucceeded), true, p), Decision::kDone);
  EXPECT_EQ(decide(plain, result(AttemptEnd::kFailed, 3), true, p), Decision::kDone) << "the file is the truth";
  EXPECT_EQ(decide(plain, result(AttemptEnd::kSucceeded), false, p), Decision::kRetry) << "exit 0 without a file";
  EXPECT_EQ(decide(plain, result(AttemptEnd::kFailed, 2), false, p), Decision::kGiveUp) << "bad input";
  EXPECT_EQ(decide(plain, result(AttemptEnd::kFailed, 3), false, p), Decision::kRetry);
  EXPECT_EQ(decide(plain, result(AttemptEnd::kNodeFailure), false, p), Decision::kRetry);
  EXPECT_EQ(decide(plain, result(AttemptEnd::kFailed, 4), false, p), Decision::kRetry) << "no candidates to drop";
  JobTrack worn = plain;
  worn.failures = 2;
  EXPECT_EQ(decide(worn, result(AttemptEnd::kFailed, 3), false, p), Decision::kGiveUp);
  JobTrack cand = plain;
  cand.has_candidates = true;
  EXPECT_EQ(decide(cand, result(AttemptEnd::kFailed, 4), false, p), Decision::kRetryQuarantined);
  EXPECT_EQ(decide(cand, result(AttemptEnd::kTimedOut), false, p), Decision::kRetryQuarantined);
  EXPECT_EQ(decide(cand, result(AttemptEnd::kFailed, -1, 9), false, p), Decision::kRetryQuarantined);
  cand.quarantined = true;
  EXPECT_EQ(decide(cand, result(AttemptEnd::kFailed, 4), false, p), Decision::kRetry);
}

TEST(Policy, IoErrorIsRetriedWithoutQuarantine) {
  JobTrack cand;
  cand.has_candidates = true;
  RetryPolicy p{2};
  EXPECT_EQ(decide(cand, result(AttemptEnd::kFailed, kRunnerExitIo), false, p), Decision::kRetry)
      << "a full disk is not the candidate's fault";
  EXPECT_EQ(decide(cand, result(AttemptEnd::kFailed, kRunnerExitResults), false, p), Decision::kRetry);
}

TEST(Policy, FailuresThatMayPass) {
  EXPECT_TRUE(failure_may_pass(AttemptEnd::kFailed, kRunnerExitIo, 0));
  EXPECT_TRUE(failure_may_pass(AttemptEnd::kFailed, kRunnerExitResults, 0));
  EXPECT_TRUE(failure_may_pass(AttemptEnd::kFailed, 1, 0)) << "mpirun's own failure";
  EXPECT_TRUE(failure_may_pass(AttemptEnd::kTimedOut, -1, 0));
  EXPECT_TRUE(failure_may_pass(AttemptEnd::kNodeFailure, -1, 0));
  EXPECT_TRUE(failure_may_pass(AttemptEnd::kLost, -1, 0));
  EXPECT_TRUE(failure_may_pass(AttemptEnd::kCancelled, -1, 0));
  EXPECT_FALSE(failure_may_pass(AttemptEnd::kFailed, kRunnerExitBadInput, 0));
  EXPECT_FALSE(failure_may_pass(AttemptEnd::kFailed, kRunnerExitJobFailed, 0));
  EXPECT_FALSE(failure_may_pass(AttemptEnd::kFailed, kRunnerExitCrashed, 0));
  EXPECT_FALSE(failure_may_pass(AttemptEnd::kFailed, -1, 11)) << "a crash";
  for (AttemptEnd e : {AttemptEnd::kSucceeded, AttemptEnd::kFailed, AttemptEnd::kTimedOut, AttemptEnd::kCancelled,
                       AttemptEnd::kNodeFailure, AttemptEnd::kLost})
    EXPECT_EQ(attempt_end_parse(attempt_end_name(e)), e);
  EXPECT_FALSE(attempt_end_parse("bogus").has_value());
}

TEST(State, TransitionsAndCounts) {
  CampaignState s;
  for (const char* id : {"a", "b", "c"}) s.add(JobTrack{id, 1, false, JobPhase::kPending, 0, 0, false, "", ""});
  EXPECT_EQ(s.runnable(), (std::vector<std::string>{"a", "b", "c"}));
  s.launched("a", "a.a1", false);
  s.launched("b", "b.a1", false);
  EXPECT_EQ(s.counts().running, 2);
  EXPECT_EQ(s.ended("a", result(AttemptEnd::kSucceeded), true, RetryPolicy{1}), Decision::kDone);
  EXPECT_EQ(s.ended("b", result(AttemptEnd::kFailed, 3), false, RetryPolicy{1}), Decision::kRetry);
  EXPECT_EQ(s.runnable(), (std::vector<std::string>{"b", "c"}));
  s.launched("b", "b.a2", false);
  EXPECT_EQ(s.ended("b", result(AttemptEnd::kFailed, 3), false, RetryPolicy{1}), Decision::kGiveUp);
  const Counts c = s.counts();
  EXPECT_EQ(c.done, 1);
  EXPECT_EQ(c.failed, 1);
  EXPECT_EQ(c.pending, 1);
  EXPECT_FALSE(s.finished());
}

TEST(State, ReplayRestoresStateAndReportsAbandonedAttempts) {
  auto make = [] {
    CampaignState s;
    for (const char* id : {"a", "b", "c", "d"}) s.add(JobTrack{id, 2, true, JobPhase::kPending, 0, 0, false, "", ""});
    return s;
  };
  using nlohmann::json;
  const std::vector<json> events = {
      {{"event", "launch"}, {"job", "a"}, {"attempt", "a.a1"}},
      {{"event", "native_id"}, {"job", "a"}, {"attempt", "a.a1"}, {"native_id", "111"}},
      {{"event", "end"}, {"job", "a"}, {"attempt", "a.a1"}, {"decision", "done"}},
      {{"event", "launch"}, {"job", "b"}, {"attempt", "b.a1"}},
      {{"event", "end"}, {"job", "b"}, {"attempt", "b.a1"}, {"decision", "retry_quarantined"}, {"reason", "crash"}},
      {{"event", "launch"}, {"job", "b"}, {"attempt", "b.a2"}, {"quarantined", true}},
      {{"event", "native_id"}, {"job", "b"}, {"attempt", "b.a2"}, {"native_id", "222"}},
      {{"event", "launch"}, {"job", "zz"}, {"attempt", "zz.a1"}},  // no longer planned
      {{"event", "launch"}, {"job", "c"}, {"attempt", "c.a1"}},
      {{"event", "end"}, {"job", "c"}, {"attempt", "c.a1"}, {"decision", "give_up"}, {"reason", "bad"}},
  };
  CampaignState s = make();
  const auto stale = s.replay(events);
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0].first, "b.a2");
  EXPECT_EQ(stale[0].second, "222");
  EXPECT_EQ(s.job("a").phase, JobPhase::kDone);
  EXPECT_EQ(s.job("b").phase, JobPhase::kPending) << "its attempt died with the orchestrator";
  EXPECT_TRUE(s.job("b").quarantined);
  EXPECT_EQ(s.job("b").attempts, 2);
  EXPECT_EQ(s.job("c").phase, JobPhase::kFailed);
  EXPECT_EQ(s.job("d").phase, JobPhase::kPending);
  EXPECT_EQ(s.runnable(), (std::vector<std::string>{"b", "d"}));
  EXPECT_EQ(s.retry_given_up(), std::vector<std::string>{}) << "c was given up without a reason to hope";
}

TEST(State, ResumeRetriesOnlyJobsGivenUpForReasonsThatMayPass) {
  CampaignState s;
  for (const char* id : {"io", "hung", "job", "input", "done", "again"})
    s.add(JobTrack{id, 1, true, JobPhase::kPending, 0, 0, false, "", ""});
  using nlohmann::json;
  auto gave_up = [](const char* job, const char* end, int code) {
    return json{{"event", "end"}, {"job", job},      {"attempt", std::string(job) + ".a3"},
                {"end", end},     {"exit_code", code}, {"signal", 0},
                {"decision", "give_up"}};
  };
  const std::vector<json> events = {
      gave_up("io", "failed", kRunnerExitIo),
      gave_up("hung", "timed_out", -1),
      gave_up("job", "failed", kRunnerExitJobFailed),
      gave_up("input", "failed", kRunnerExitBadInput),
      {{"event", "end"}, {"job", "done"}, {"attempt", "done.a1"}, {"decision", "done"}},
      gave_up("again", "node_failure", -1),
      {{"event", "retry_given_up"}, {"job", "again"}},  // an earlier resume already retried it
  };
  s.replay(events);
  EXPECT_EQ(s.job("io").phase, JobPhase::kFailed);
  EXPECT_EQ(s.job("again").phase, JobPhase::kPending);
  EXPECT_EQ(s.retry_given_up(), (std::vector<std::string>{"io", "hung"}));
  EXPECT_EQ(s.job("io").phase, JobPhase::kPending);
  EXPECT_EQ(s.job("io").failures, 0) << "a fresh retry budget";
  EXPECT_EQ(s.job("job").phase, JobPhase::kFailed);
  EXPECT_EQ(s.job("input").phase, JobPhase::kFailed);
  EXPECT_EQ(s.job("done").phase, JobPhase::kDone);
  // Live: a job given up after I/O errors may pass; one given up after job errors may not.
  s.launched("io", "io.a4", false);
  EXPECT_EQ(s.ended("io", result(AttemptEnd::kFailed, kRunnerExitIo), false, RetryPolicy{0}), Decision::kGiveUp);
  EXPECT_TRUE(s.job("io").may_pass);
  EXPECT_EQ(s.retry_given_up(), (std::vector<std::string>{"io"}));
}

}  // namespace
}  // namespace fk::orchestrator
