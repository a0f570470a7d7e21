// fk compare's rules (compare_rules.h) on sample sets, and compare_campaigns on
// synthetic campaigns: noise is not flagged, a 20% slowdown everywhere is, one slow
// kernel among quiet ones is, precision and verdict regressions are, and missing or
// failed jobs are.
#include "reports_test_util.h"
#include "results/campaign/compare.h"
#include "results/campaign/merge.h"

#include <cmath>
#include <random>

namespace fk::results {
namespace {

using testing::expect_error;
using testing::job_id;

std::vector<double> lognormal(double median, double sigma, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(median * std::exp(sigma * z(rng)));
  return v;
}

TEST(CompareRules, SpeedNeedsSizeSignificanceAndTime) {
  const CompareOptions o;
  const auto old_s = lognormal(100e-6, 0.03, 30, 1);
  EXPECT_EQ(compare_speed(old_s, lognormal(120e-6, 0.03, 30, 2), o).change, Change::kWorse);
  EXPECT_EQ(compare_speed(old_s, lognormal(80e-6, 0.03, 30, 2), o).change, Change::kBetter);
  EXPECT_EQ(compare_speed(old_s, lognormal(100e-6, 0.03, 30, 2), o).change, Change::kSame);
  EXPECT_EQ(compare_speed(old_s, lognormal(105e-6, 0.03, 30, 2), o).change, Change::kSame);  // below the threshold
  // Only the tail grew (interference): the fast end did not move.
  std::vector<double> tail = lognormal(100e-6, 0.03, 30, 3);
  for (size_t i = 0; i < 20; ++i) tail[i] *= 1.6;
  EXPECT_EQ(compare_speed(old_s, tail, o).change, Change::kSame);
  const SpeedTest fast = compare_speed(lognormal(1e-6, 0.03, 30, 1), lognormal(1.5e-6, 0.03, 30, 2), o);
  EXPECT_EQ(fast.change, Change::kUntestable);
  EXPECT_EQ(fast.why, "too fast");
  const SpeedTest few = compare_speed({1e-3, 1e-3}, {2e-3, 2e-3}, o);
  EXPECT_EQ(few.change, Change::kUntestable);
  EXPECT_EQ(few.why, "too few samples");
}

TEST(CompareRules, PackNoiseRaisesTheBarForSingleItems) {
  CompareOptions o;
  std::vector<double> shifts = {0.3, -0.25, 0.1, -0.1, 0.2, -0.3, 0.05, 0.0, -0.05, 0.15};  // a noisy machine
  const PackNoise noisy = compare_pack_noise(shifts, o);
  EXPECT_GT(noisy.sigma, 0.1);
  EXPECT_EQ(noisy.change, Change::kSame);
  SpeedTest item;
  item.change = Change::kWorse;
  item.shift = std::log(1.3);
  item.p_slower = 1e-9;  // the item's own samples are clearly slower
  EXPECT_EQ(compare_speed_in_pack(item, noisy, o), Change::kSame);  // 30% is within this pack's noise
  const PackNoise quiet = compare_pack_noise(std::vector<double>(10, 0.001), o);
  EXPECT_EQ(compare_speed_in_pack(item, quiet, o), Change::kWorse);
  SpeedTest unsure = item;
  unsure.p_slower = 0.2;  // a shift its own samples do not support
  EXPECT_EQ(compare_speed_in_pack(unsure, quiet, o), Change::kSame);
  EXPECT_FALSE(noisy.resolves_items);  // single timings of the noisy pack do not count
  EXPECT_TRUE(quiet.resolves_items);
  EXPECT_FALSE(compare_pack_noise({0.001, 0.001}, o).resolves_items);  // noise unknown
  std::vector<double> all_slower;
  for (int i = 0; i < 20; ++i) all_slower.push_back(std::log(1.2) + 0.01 * (i % 5 - 2));
  const PackNoise moved = compare_pack_noise(all_slower, o);
  EXPECT_EQ(moved.change, Change::kWorse);
  EXPECT_NEAR(std::exp(moved.shift), 1.2, 0.01);
  all_slower.resize(kMinPackItems - 1);  // too few items to judge the pack
  EXPECT_EQ(compare_pack_noise(all_slower, o).change, Change::kSame);
}

// The items of one job share a process, and a process as a whole can run 30% slower
// than an identical one: a pack-wide change needs most jobs to agree.
TEST(CompareRules, PackWideChangeNeedsMostJobs) {
  CompareOptions o;
  std::vector<double> shifts;
  std::vector<std::string> jobs;
  auto add_job = [&](const std::string& job, double ratio, int items) {
    for (int i = 0; i < items; ++i) {
      shifts.push_back(std::log(ratio) + 0.01 * (i % 3 - 1));
      jobs.push_back(job);
    }
  };
  // Two of four jobs 40% slower, two unchanged: the items alone (12 of 16 slower, one
  // sided signed-rank p < 0.01 and a median above 10%) would call the campaign slower.
  add_job("a", 1.4, 6);
  add_job("b", 1.4, 6);
  add_job("c", 1.0, 2);
  add_job("d", 1.0, 2);
  const PackNoise ungrouped = compare_pack_noise(shifts, o);
  ASSERT_EQ(ungrouped.change, Change::kWorse);
  const PackNoise two_of_four = compare_pack_noise(shifts, o, jobs);
  EXPECT_EQ(two_of_four.jobs, 4u);
  EXPECT_EQ(two_of_four.jobs_slower, 2u);
  EXPECT_EQ(two_of_four.change, Change::kSame);
  // Three of four (two thirds, rounded up) are enough.
  for (size_t i = 0; i < shifts.size(); ++i)
    if (jobs[i] == "c") shifts[i] = std::log(1.3);
  const PackNoise three_of_four = compare_pack_noise(shifts, o, jobs);
  EXPECT_EQ(three_of_four.jobs_slower, 3u);
  EXPECT_EQ(three_of_four.change, Change::kWorse);
  // The mirror image: faster.
  std::vector<double> negated;
  for (double s : shifts) negated.push_back(-s);
  const PackNoise faster = compare_pack_noise(negated, o, jobs);
  EXPECT_EQ(faster.jobs_faster, 3u);
  EXPECT_EQ(faster.change, Change::kBetter);
  // One job alone: the item rule as before.
  const PackNoise one_job = compare_pack_noise(shifts, o, std::vector<std::string>(shifts.size(), "a"));
  EXPECT_EQ(one_job.jobs, 1u);
  EXPECT_EQ(one_job.change, Change::kWorse);
  EXPECT_THROW(compare_pack_noise(shifts, o, {"a"}), std::invalid_argument);  // one key per shift
}

TEST(CompareRules, ErrorsAgreementAndVerdicts) {
  const CompareOptions o;
  EXPECT_EQ(compare_error(1e-3, 3e-3, o), Change::kWorse);
  EXPECT_EQ(compare_error(1e-3, 1.5e-3, o), Change::kSame);
  EXPECT_EQ(compare_error(1e-9, 1e-8, o), Change::kSame);  // x10 but below the floor
  EXPECT_EQ(compare_error(1e-3, NAN, o), Change::kWorse);
  EXPECT_EQ(compare_error(3e-3, 1e-3, o), Change::kBetter);
  EXPECT_EQ(compare_agreement(1.0, 0.75, o), Change::kWorse);
  EXPECT_EQ(compare_agreement(1.0, 0.95, o), Change::kSame);
  EXPECT_EQ(compare_verdict("PASSED", "REWARD_HACK"), Change::kWorse);
  EXPECT_EQ(compare_verdict("CRASHED", "PASSED"), Change::kBetter);
  EXPECT_EQ(compare_verdict("CRASHED", "TIMEOUT"), Change::kSame);
}

class CompareTest : public testing::ReportsTest {
 protected:
  // Campaign `name` of `jobs` jobs built from `base` (ids 0..jobs-1, seeds offset by `seed`).
  std::string campaign(const std::string& name, int jobs, SyntheticJobSpec base, uint64_t seed) {
    for (int i = 0; i < jobs; ++i) {
      SyntheticJobSpec s = base;
      s.id = job_id(i);
      s.tp = 1 + i % 2;
      s.seed = seed * 1000 + static_cast<uint64_t>(i);
      if (tweak) tweak(i, s);
      write_job(name, s);
    }
    MergeOptions o;
    o.results_dir = path(name);
    campaign_merge(o);
    return path(name + "/campaign.h5");
  }
  CompareResult run(const std::string& a, const std::string& b, const CompareOptions& o = {}) {
    return compare_campaigns(CampaignSource::open(a), CampaignSource::open(b), o);
  }
  static int64_t count(const CompareResult& r, FindingKind kind, bool regression = true) {
    int64_t n = 0;
    for (const Finding& f : r.findings) n += f.kind == kind && f.regression == regression;
    return n;
  }
  std::function<void(int, SyntheticJobSpec&)> tweak;
};

TEST_F(CompareTest, TwoNoisyRunsOfOneCampaignAreNotFlagged) {
  SyntheticJobSpec s;
  s.noise = 0.15;  // within-run spread
  s.candidate_verdicts = {"PASSED"};
  s.candidate_set = "c";
  const std::string a = campaign("a", 6, s, 1);
  // Run-to-run noise: every instance of the second run is off by its own factor.
  tweak = [](int i, SyntheticJobSpec& x) { x.time_scale = std::exp(0.1 * std::sin(7.0 * i)); };
  const std::string b = campaign("b", 6, s, 2);
  const CompareResult r = run(a, b);
  EXPECT_EQ(r.regressions(), 0) << compare_format(r, {}, true);
  EXPECT_EQ(r.counts.jobs_common, 6);
  EXPECT_GT(r.counts.timings, 70);
}

TEST_F(CompareTest, SlowdownEverywhereIsFlaggedAsAPack) {
  SyntheticJobSpec s;
  const std::string a = campaign("a", 4, s, 1);
  s.time_scale = 1.2;
  const std::string b = campaign("b", 4, s, 2);
  const CompareResult r = run(a, b);
  bool pack = false;
  for (const Finding& f : r.findings) pack = pack || (f.regression && f.item == "all kernel timings");
  EXPECT_TRUE(pack) << compare_format(r, {}, false);
  const std::string text = compare_format(r, {}, false);
  EXPECT_NE(text.find("REGRESSIONS"), std::string::npos);
  // The other way round it is an improvement, not a regression.
  const CompareResult back = run(b, a);
  EXPECT_EQ(back.regressions(), 0) << compare_format(back, {}, true);
  EXPECT_GT(back.improvements(), 0);
}

TEST_F(CompareTest, OneSlowKernelAmongQuietOnesIsFlagged) {
  SyntheticJobSpec s;
  s.noise = 0.02;
  const std::string a = campaign("a", 4, s, 1);
  const std::string b = campaign("b", 4, s, 2);
  // NEW's job 2 again, the same but for instance 5, which is 30% slower.
  JobResult slow = synthetic_job([&] {
    SyntheticJobSpec x = s;
    x.id = job_id(2);
    x.tp = 1;
    x.seed = 2002;
    return x;
  }());
  for (auto& k : slow.kernels)
    if (k.role == "role.5")
      for (double& t : k.seconds) t *= 1.3;
  job_result_write(path("b/" + job_id(2) + ".h5"), slow);
  MergeOptions o;
  o.results_dir = path("b");
  campaign_merge(o);
  const CompareResult r = run(a, b);
  ASSERT_EQ(r.regressions(), 1) << compare_format(r, {}, true);
  EXPECT_EQ(r.findings[0].kind, FindingKind::kSpeed);
  EXPECT_NE(r.findings[0].item.find("role.5"), std::string::npos) << r.findings[0].item;
  EXPECT_EQ(r.findings[0].job_id, job_id(2));
}

TEST_F(CompareTest, PrecisionDropAndVerdictChangesAreFlagged) {
  SyntheticJobSpec s;
  s.candidate_set = "c";
  s.candidate_verdicts = {"PASSED", "INCORRECT_NUMERICAL"};
  const std::string a = campaign("a", 2, s, 1);
  tweak = [](int i, SyntheticJobSpec& x) {
    if (i == 0) {
      x.rel_l2_scale = 3;                                          // kernels 3x less precise
      x.candidate_verdicts = {"INCORRECT_NUMERICAL", "PASSED"};    // one worse, one better
    }
    if (i == 1) {
      x.layer_err_scale = 4;     // the model drifts more
      x.failing_instances = {3};  // a baseline kernel out of tolerance
    }
  };
  const std::string b = campaign("b", 2, s, 2);
  const CompareResult r = run(a, b);
  const std::string text = compare_format(r, {}, true);
  EXPECT_GE(count(r, FindingKind::kPrecision), 12 + 1 + 2) << text;  // 12 kernels, candidate rel L2, layers, KL
  EXPECT_EQ(count(r, FindingKind::kVerdict), 1 + 1 + 1) << text;     // candidate, its instance, kernel 3
  EXPECT_EQ(count(r, FindingKind::kVerdict, false), 2) << text;      // the other candidate and its instance
  EXPECT_NE(text.find("PASSED -> INCORRECT_NUMERICAL"), std::string::npos) << text;
  EXPECT_NE(text.find("PASSED -> OUT_OF_TOLERANCE"), std::string::npos) << text;
  EXPECT_NE(text.find("layer error vs fp32"), std::string::npos) << text;
  EXPECT_EQ(count(r, FindingKind::kSpeed), 0) << text;
}

TEST_F(CompareTest, MissingAndFailedJobsAndUnrelatedCampaigns) {
  SyntheticJobSpec s;
  const std::string a = campaign("a", 3, s, 1);
  tweak = [](int i, SyntheticJobSpec& x) {
    if (i == 1) x.status = "failed";
  };
  const std::string b = campaign("b", 2, s, 1);  // job 2 missing, job 1 failed
  const CompareResult r = run(a, b);
  EXPECT_EQ(count(r, FindingKind::kJob), 2) << compare_format(r, {}, false);
  EXPECT_EQ(r.counts.jobs_only_old, 1);
  const std::string text = compare_format(r, {}, false);
  EXPECT_NE(text.find("missing in NEW"), std::string::npos) << text;
  EXPECT_NE(text.find("completed -> failed"), std::string::npos) << text;
  // Identical files: nothing at all.
  const CompareResult same = run(a, a);
  EXPECT_EQ(same.findings.size(), 0u);
  // Another campaign (no id in common) is bad input.
  tweak = nullptr;
  SyntheticJobSpec other;
  for (int i = 0; i < 2; ++i) {
    other.id = job_id(100 + i);
    write_job("c", other);
  }
  expect_error(ErrorKind::kInvalidArgument, [&] { run(a, path("c")); });
}

}  // namespace
}  // namespace fk::results
