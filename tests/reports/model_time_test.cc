// The model-stage time and the end-to-end speedup (results/model_time.h,
// docs/results-schema.md "Definitions of the figures"): per iteration the sum over steps
// of the slowest rank's step time, then the median over iterations; and the runner's
// figure (computed from its records) equals the campaign digest's (summary/jobs, read
// back from the job file) on the same records.
#include "results/model_time.h"
#include "reports_test_util.h"
#include "results/campaign/job_digest.h"
#include "results/h5/h5.h"
#include "results/job_result.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace fk::results {
namespace {

// Two ranks, three iterations, prefill + one decode step. Rank 1 is the slower one in
// iteration 0's prefill only. Per iteration (max over ranks, summed over steps):
//   baseline: 1.5 + 1 = 2.5, 2 + 5 = 7, 3 + 2 = 5  -> median 5
//   selected: 1 + 1 = 2,     1 + 1 = 2, 1 + 3 = 4  -> median 2
// The sum over steps of per-step medians would give 2 + 2 = 4 and 1 + 1 = 2 instead
// (speedup 2, not 2.5): these records tell the two definitions apart.
std::vector<StepTiming> records() {
  std::vector<StepTiming> out;
  auto add = [&](const char* run, int64_t it, const char* step, double rank0, double rank1) {
    out.push_back({run, it, step, 0, rank0, 0.5 * rank0, 0.1 * rank0});
    out.push_back({run, it, step, 1, rank1, 0.5 * rank1, 0.1 * rank1});
  };
  const double base[3][2] = {{1, 1}, {2, 5}, {3, 2}}, sel[3][2] = {{1, 1}, {1, 1}, {1, 3}};
  for (int64_t it = 0; it < 3; ++it) {
    add("baseline", it, "prefill", base[it][0], it == 0 ? 1.5 : 0.5 * base[it][0]);
    add("baseline", it, "decode.0", base[it][1], 0.5 * base[it][1]);
    add("selected", it, "prefill", sel[it][0], 0.5 * sel[it][0]);
    add("selected", it, "decode.0", sel[it][1], 0.5 * sel[it][1]);
  }
  return out;
}

// The definition the runner used before: sum over steps of the (upper) median over
// iterations of the slowest rank's step time.
double sum_of_step_medians(const std::vector<StepTiming>& steps, const std::string& run) {
  std::map<std::string, std::map<int64_t, double>> worst;
  for (const auto& s : steps)
    if (s.run == run) worst[s.step][s.iteration] = std::max(worst[s.step][s.iteration], s.total_s);
  double total = 0;
  for (const auto& [step, by_iter] : worst) {
    std::vector<double> v;
    for (const auto& [it, t] : by_iter) v.push_back(t);
    std::sort(v.begin(), v.end());
    total += v[v.size() / 2];
  }
  return total;
}

TEST(ModelTime, IsTheMedianOverIterationsOfWholeForwards) {
  const std::vector<StepTiming> steps = records();
  const ModelTimeIterations b = model_time_iterations(steps, "baseline");
  EXPECT_EQ(b.iteration, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(b.model_s, (std::vector<double>{2.5, 7, 5}));
  // Mean over ranks: iteration 0: (1 + 1.5) / 2 + (1 + 0.5) / 2 = 2.
  EXPECT_NEAR(b.mean_rank_s[0], 2.0, 1e-12);
  EXPECT_NEAR(b.compute_s[0], 1.0, 1e-12);
  EXPECT_NEAR(b.comm_s[0], 0.2, 1e-12);
  EXPECT_EQ(model_time(steps, "baseline"), 5.0);
  EXPECT_EQ(model_time(steps, "selected"), 2.0);
  EXPECT_EQ(model_time_speedup(steps), 2.5);
  // The old runner definition differs on these records, so the checks above tell them apart.
  EXPECT_EQ(sum_of_step_medians(steps, "baseline"), 4.0);
  EXPECT_NE(sum_of_step_medians(steps, "baseline") / sum_of_step_medians(steps, "selected"), model_time_speedup(steps));
}

TEST(ModelTime, EvenIterationCountsInterpolateAndMissingRunsAreNaN) {
  std::vector<StepTiming> steps = records();
  steps.push_back({"baseline", 3, "prefill", 0, 10, 0, 0});  // iteration 3: 10 -> {2.5, 7, 5, 10}
  EXPECT_EQ(model_time(steps, "baseline"), 6.0);
  EXPECT_TRUE(std::isnan(model_time(steps, "fp32")));
  EXPECT_TRUE(model_time_iterations(steps, "fp32").model_s.empty());
  std::vector<StepTiming> baseline_only;
  for (const auto& s : steps)
    if (s.run == "baseline") baseline_only.push_back(s);
  EXPECT_TRUE(std::isnan(model_time_speedup(baseline_only)));  // no selected run
  EXPECT_TRUE(std::isnan(model_time_speedup(1.0, 0.0)));
  EXPECT_EQ(model_time_speedup(3.0, 2.0), 1.5);
}

class ModelTimeFile : public testing::ReportsTest {};

// The runner computes candidates/summary's e2e_speedup with model_time_speedup on its
// StepTiming records (runner/candidate_stage.cc); the digest (summary/jobs, the score's
// report) reads the same records back from the job file. Both must be one figure.
TEST_F(ModelTimeFile, RunnerAndDigestAgreeOnTheSameRecords) {
  SyntheticJobSpec spec;
  spec.candidate_set = "mine";
  spec.candidate_verdicts = {"PASSED"};
  JobResult r = synthetic_job(spec);
  r.steps = records();
  const double runner_speedup = model_time_speedup(r.steps);  // what the runner writes
  job_result_write(path("j.h5"), r);
  const JobDigest d = job_digest_read(h5::File::open_read(path("j.h5")));
  EXPECT_EQ(d.baseline.model_s, model_time(r.steps, "baseline"));
  EXPECT_EQ(d.selected.model_s, model_time(r.steps, "selected"));
  EXPECT_EQ(d.e2e_speedup, runner_speedup);
  EXPECT_EQ(d.e2e_speedup, 2.5);
  EXPECT_EQ(d.baseline.iterations, 3);
  EXPECT_NEAR(d.baseline.mean_rank_s, model_time_iterations(r.steps, "baseline").mean_rank_s[2], 1e-12);
}

}  // namespace
}  // namespace fk::results
