// The campaign score (score.h) on hand-made items, and the text and HTML reports of
// synthetic campaigns: key lines present, baseline-only campaigns reported
// meaningfully, one SVG per chart, escaped text.
#include "reports_test_util.h"
#include "results/campaign/merge.h"
#include "results/campaign/report_data.h"
#include "results/campaign/report_html.h"
#include "results/campaign/report_text.h"
#include "results/campaign/score.h"

#include <cmath>

namespace fk::results {
namespace {

using testing::job_id;

ScoreItem item(const std::string& verdict, bool exercised, double e2e) {
  ScoreItem it;
  it.verdict = verdict;
  it.exercised = exercised;
  it.e2e_speedup = e2e;
  return it;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(Score, IncorrectItemsEarnNoCreditAndAbsentOpsAreNotApplicable) {
  const std::vector<ScoreItem> items = {
      item("PASSED", true, 2.0),
      item("INCORRECT_NUMERICAL", true, 3.0),  // faster but wrong: credit 1.0
      item("COMPILE_ERROR", false, NAN),       // a failure wherever it is used: applicable, credit 1.0
      item("UNSUPPORTED", false, NAN),         // the model has no such op: not applicable
  };
  const Score s = score_compute(items);
  EXPECT_EQ(s.items, 4);
  EXPECT_EQ(s.applicable, 3);
  EXPECT_EQ(s.passed, 1);
  EXPECT_NEAR(s.geomean_credit, std::cbrt(2.0), 1e-12);
  EXPECT_NEAR(s.correctness, 1.0 / 3, 1e-12);
  EXPECT_NEAR(s.coverage, 3.0 / 4, 1e-12);
  EXPECT_NEAR(s.score, std::cbrt(2.0) / 3 * 3 / 4, 1e-12);
  EXPECT_NEAR(s.geomean_passed, 2.0, 1e-12);
}

TEST(Score, BaselineOnlyIsUndefinedAndNothingApplicableScoresZero) {
  EXPECT_FALSE(score_compute({}).defined());
  EXPECT_TRUE(std::isnan(score_compute({}).score));
  const Score s = score_compute({item("UNSUPPORTED", false, NAN)});
  EXPECT_TRUE(s.defined());
  EXPECT_EQ(s.score, 0.0);
}

class ReportTest : public testing::ReportsTest {};

TEST_F(ReportTest, CandidateCampaignTextAndHtml) {
  for (int i = 0; i < 4; ++i) {
    SyntheticJobSpec s;
    s.id = job_id(i);
    s.tp = i % 2 == 0 ? 1 : 2;
    s.architecture = i < 2 ? "llama-3.1-8b" : "mixtral-8x7b";
    s.family = i < 2 ? "llama" : "mistral";
    s.candidate_set = "set<&>";  // must be escaped in HTML
    s.candidate_verdicts = {"PASSED", i == 3 ? "INCORRECT_NUMERICAL" : "PASSED"};
    s.e2e_speedup = 1.5;
    write_job("r", s);
  }
  MergeOptions o;
  o.results_dir = path("r");
  campaign_merge(o);
  const ReportData data = report_data_read(CampaignSource::open(path("r/campaign.h5")));
  ASSERT_EQ(data.jobs.size(), 4u);
  EXPECT_EQ(data.items.size(), 8u);
  const std::string text = report_text(data);
  EXPECT_NE(text.find("FastKernels campaign report: synthetic"), std::string::npos) << text;
  // 8 items, 7 PASSED with e2e ~1.5, one credited 1.0.
  EXPECT_NE(text.find("score = G x C x V"), std::string::npos) << text;
  EXPECT_NE(text.find("(8 items, 8 applicable, 7 PASSED)"), std::string::npos) << text;
  EXPECT_NE(text.find("Kernels per architecture and op"), std::string::npos);
  EXPECT_NE(text.find("Geometric means per family"), std::string::npos);
  EXPECT_NE(text.find("INCORRECT_NUMERICAL 1, PASSED 1"), std::string::npos) << text;  // mixtral linear
  EXPECT_NE(text.find("mistral"), std::string::npos);
  EXPECT_NE(text.find("Candidates per job"), std::string::npos);

  const std::string html = report_html(data);
  EXPECT_EQ(html.rfind("</html>\n"), html.size() - 8);
  // Speedup by layout, one error chart per architecture x workload (2), time split.
  EXPECT_EQ(count(html, "<svg "), 4u);
  EXPECT_EQ(count(html, "</svg>"), 4u);
  EXPECT_NE(html.find("End-to-end speedup of the candidates by layout"), std::string::npos);
  EXPECT_NE(html.find("Relative error vs layer: llama-3.1-8b"), std::string::npos);
  EXPECT_NE(html.find("Time split"), std::string::npos);
  EXPECT_EQ(html.find("set<&>"), std::string::npos);
  EXPECT_NE(html.find("set&lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(count(html, "nan"), 0u);  // skipped, never drawn
}

TEST_F(ReportTest, BaselineOnlyCampaignStillReportsTimesAndPrecision) {
  SyntheticJobSpec a;
  a.id = job_id(1);
  write_job("r", a);
  SyntheticJobSpec b = a;
  b.id = job_id(2);
  b.tp = 2;
  b.time_scale = 0.5;  // twice as fast on two ranks
  write_job("r", b);
  const ReportData data = report_data_read(CampaignSource::open(path("r")));  // a folder works too
  EXPECT_FALSE(data.has_candidates());
  const std::string text = report_text(data);
  EXPECT_NE(text.find("score: n/a (baseline-only campaign"), std::string::npos) << text;
  EXPECT_NE(text.find("MODEL TIME"), std::string::npos);
  EXPECT_NE(text.find("COMM %"), std::string::npos);
  EXPECT_NE(text.find("LAST-LAYER ERR"), std::string::npos);
  EXPECT_EQ(text.find("Candidates per job"), std::string::npos);
  // synthetic_job's peak memory: the one-rank job's fp32 run at 8 MiB, all of its estimate.
  EXPECT_NE(text.find("PEAK MEM"), std::string::npos);
  int memory_rows = 0;
  for (size_t at = text.find("8.0 MiB"); at != std::string::npos; at = text.find("8.0 MiB", at + 1)) {
    const std::string rest = text.substr(at, text.find('\n', at) - at);
    EXPECT_EQ(rest.substr(rest.find_last_not_of(' ') - 3, 4), "100%") << rest;  // the last column
    ++memory_rows;
  }
  EXPECT_EQ(memory_rows, 2) << text;
  // The tp2 job against the same job on one rank.
  const JobDigest* tp2 = data.jobs[0].keys.tp == 2 ? &data.jobs[0] : &data.jobs[1];
  EXPECT_NEAR(report_layout_speedup(data, *tp2), 2.0, 0.3);
  const std::string html = report_html(data);
  EXPECT_NE(html.find("Speedup of each layout over one rank"), std::string::npos);
  EXPECT_EQ(count(html, "<svg "), 3u);
}

}  // namespace
}  // namespace fk::results
