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
}

}  // namespace
}  // namespace fk::orchestrator
