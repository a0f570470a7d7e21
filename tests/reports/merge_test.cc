// The campaign merge (fk collect) on synthetic job files: whole copies under /jobs,
// summary tables with one row per job / instance / candidate, bad files reported and
// skipped, temporary files and earlier outputs ignored, outputs replaced atomically.
#include "reports_test_util.h"
#include "results/campaign/job_digest.h"
#include "results/campaign/merge.h"
#include "results/campaign/source.h"
#include "results/h5/file_sum.h"
#include "results/h5/h5.h"

#include <algorithm>
#include <cmath>
#include <fstream>

namespace fk::results {
namespace {

using testing::expect_error;
using testing::job_id;
namespace fs = std::filesystem;

class MergeTest : public testing::ReportsTest {
 protected:
  // Three jobs: llama tp1, llama tp2 with two candidates, gemma tp1.
  void write_three(const std::string& folder) {
    SyntheticJobSpec a;
    a.id = job_id(1);
    write_job(folder, a);
    SyntheticJobSpec b;
    b.id = job_id(2);
    b.tp = 2;
    b.candidate_set = "mine";
    b.candidate_verdicts = {"PASSED", "INCORRECT_NUMERICAL"};
    write_job(folder, b);
    SyntheticJobSpec c;
    c.id = job_id(3);
    c.architecture = "gemma-2-9b";
    c.model_type = "gemma2";
    c.family = "";  // falls back to model_type
    c.instances = 5;
    write_job(folder, c);
  }
};

TEST_F(MergeTest, CopiesEveryJobAndBuildsSummaries) {
  write_three("r");
  MergeOptions o;
  o.results_dir = path("r");
  const MergeResult r = campaign_merge(o);
  EXPECT_EQ(r.output, path("r/campaign.h5"));
  EXPECT_EQ(r.jobs, 3);
  EXPECT_EQ(r.completed, 3);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_EQ(r.kernel_rows, 12 + 12 + 5);
  EXPECT_EQ(r.candidate_rows, 2);

  h5::File f = h5::File::open_read(r.output);
  EXPECT_EQ(f.attr<std::string>("format"), "fastkernels-campaign");
  EXPECT_EQ(f.attr<int64_t>("schema_version"), 1);
  EXPECT_EQ(f.attr<int64_t>("jobs"), 3);
  EXPECT_EQ(f.attr<std::string>("campaign"), "synthetic");
  EXPECT_EQ(f.open_group("jobs").children(), (std::vector<std::string>{job_id(1), job_id(2), job_id(3)}));
  // The copy is the whole job file: attributes, tables and raw samples.
  h5::File src = h5::File::open_read(path("r/" + job_id(2) + ".h5"));
  const h5::Group copy = f.open_group("jobs/" + job_id(2));
  std::vector<std::string> names = src.attr_names();  // and the source file's content hash
  names.insert(std::lower_bound(names.begin(), names.end(), "source_hash"), "source_hash");
  EXPECT_EQ(copy.attr_names(), names);
  EXPECT_EQ(copy.attr<std::string>("source_hash"), h5::file_sum_check(path("r/" + job_id(2) + ".h5")).hash);
  EXPECT_EQ(copy.attr<std::string>("job_json"), src.attr<std::string>("job_json"));
  EXPECT_EQ(copy.read_array<double>("kernel_stage/timings/0003"), src.read_array<double>("kernel_stage/timings/0003"));
  EXPECT_EQ(copy.read_table("candidates/summary").column<std::string>("verdict"),
            (std::vector<std::string>{"PASSED", "INCORRECT_NUMERICAL"}));

  const h5::Table jobs = f.read_table("summary/jobs");
  ASSERT_EQ(jobs.rows(), 3u);
  EXPECT_EQ(jobs.column<std::string>("job_id")[1], job_id(2));
  EXPECT_EQ(jobs.column<int64_t>("tp")[1], 2);
  EXPECT_EQ(jobs.column<std::string>("family"), (std::vector<std::string>{"llama", "llama", "gemma2"}));
  EXPECT_EQ(jobs.column<int64_t>("kernels_total")[2], 5);
  EXPECT_EQ(jobs.column<int64_t>("candidates_passed")[1], 1);
  // Job 2 is tp2: its fullest rank (1) in its fullest run (fp32), synthetic_job's 4-layer figures.
  EXPECT_EQ(jobs.column<int64_t>("peak_memory_bytes")[1], 2 * 4 * (int64_t{1} << 20) + 4096);
  EXPECT_EQ(jobs.column<int64_t>("peak_reserved_bytes")[1], (2 * 4 * (int64_t{1} << 20) + 4096) * 5 / 4);
  EXPECT_EQ(jobs.column<int64_t>("memory_estimate_bytes")[1], 2 * 4 * (int64_t{1} << 20));
  EXPECT_NEAR(jobs.column<double>("e2e_speedup")[1], 1.25, 0.1);
  EXPECT_TRUE(std::isnan(jobs.column<double>("e2e_speedup")[0]));  // no selected run
  EXPECT_NEAR(jobs.column<double>("baseline_rel_err_vs_fp32")[0], 4e-3, 1e-12);  // layer 3 of 4, prefill
  const h5::Table kernels = f.read_table("summary/kernels");
  EXPECT_EQ(kernels.rows(), 29u);
  EXPECT_EQ(kernels.column<std::string>("job_id")[28], job_id(3));
  EXPECT_EQ(kernels.column<std::string>("architecture")[28], "gemma-2-9b");
  EXPECT_TRUE(kernels.has_column("median_s"));
  const h5::Table cands = f.read_table("summary/candidates");
  EXPECT_EQ(cands.column<std::string>("candidate"), (std::vector<std::string>{"cand-rms_norm", "cand-linear"}));
  EXPECT_EQ(cands.column<int64_t>("tp"), (std::vector<int64_t>{2, 2}));
}

TEST_F(MergeTest, BadFilesAreNamedAndSkippedTemporariesIgnored) {
  write_three("r");
  { std::ofstream(path("r/garbage.h5")) << "not an hdf5 file at all"; }
  {  // a job file cut in half, as a full disk would leave it
    const std::string whole = path("r/" + job_id(1) + ".h5");
    fs::copy_file(whole, path("r/truncated.h5"));
    fs::resize_file(path("r/truncated.h5"), fs::file_size(whole) / 2);
  }
  fs::copy_file(path("r/" + job_id(3) + ".h5"), path("r/" + job_id(3) + ".h5.tmp.123.0"));
  std::vector<std::string> seen;
  MergeOptions o;
  o.results_dir = path("r");
  o.output = path("out/c.h5");
  fs::create_directories(path("out"));
  o.on_file = [&](const std::string& file, const std::string& problem) {
    seen.push_back(fs::path(file).filename().string() + (problem.empty() ? "" : " !"));
  };
  const MergeResult r = campaign_merge(o);
  EXPECT_EQ(r.jobs, 3);
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_NE(r.problems[0].find("garbage.h5"), std::string::npos) << r.problems[0];
  EXPECT_NE(r.problems[1].find("truncated.h5"), std::string::npos) << r.problems[1];
  EXPECT_EQ(r.skipped.size(), 1u);  // the temporary file
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(h5::File::open_read(o.output).attr<int64_t>("files_left_out"), 2);
  EXPECT_EQ(h5::File::open_read(o.output).read_table("summary/jobs").rows(), 3u);
}

TEST_F(MergeTest, RerunReplacesTheOutputAndSkipsIt) {
  write_three("r");
  MergeOptions o;
  o.results_dir = path("r");
  EXPECT_EQ(campaign_merge(o).jobs, 3);
  SyntheticJobSpec d;
  d.id = job_id(4);
  write_job("r", d);
  const MergeResult again = campaign_merge(o);  // campaign.h5 is in the folder now
  EXPECT_EQ(again.jobs, 4);
  EXPECT_TRUE(again.problems.empty());
  EXPECT_EQ(again.skipped.size(), 1u);
  EXPECT_EQ(h5::File::open_read(again.output).read_table("summary/jobs").rows(), 4u);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(path("r"))) names.push_back(e.path().filename().string());
  EXPECT_EQ(names.size(), 5u);  // 4 jobs + campaign.h5, no temporary left
}

TEST_F(MergeTest, DuplicateJobIdsAndBadFolders) {
  write_three("r");
  fs::copy_file(path("r/" + job_id(1) + ".h5"), path("r/zz-copy.h5"));
  MergeOptions o;
  o.results_dir = path("r");
  const MergeResult r = campaign_merge(o);
  EXPECT_EQ(r.jobs, 3);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("already merged"), std::string::npos) << r.problems[0];

  fs::create_directories(path("empty"));
  MergeOptions e;
  e.results_dir = path("empty");
  expect_error(ErrorKind::kInvalidArgument, [&] { campaign_merge(e); });
  EXPECT_FALSE(fs::exists(path("empty/campaign.h5")));
  MergeOptions m;
  m.results_dir = path("missing");
  expect_error(ErrorKind::kNotFound, [&] { campaign_merge(m); });
}

TEST_F(MergeTest, SourcesReadFoldersAndCampaignFilesAlike) {
  write_three("r");
  MergeOptions o;
  o.results_dir = path("r");
  campaign_merge(o);
  const CampaignSource folder = CampaignSource::open(path("r"));
  const CampaignSource file = CampaignSource::open(path("r/campaign.h5"));
  EXPECT_TRUE(folder.is_folder());
  EXPECT_EQ(folder.job_ids(), file.job_ids());  // the folder's campaign.h5 is not a job
  const JobDigest a = job_digest_read(folder.job(job_id(2)).root);
  const JobDigest b = job_digest_read(file.job(job_id(2)).root);
  EXPECT_EQ(a.keys.layout, b.keys.layout);
  EXPECT_EQ(a.baseline.model_s, b.baseline.model_s);
  expect_error(ErrorKind::kInvalidArgument, [&] { CampaignSource::open(path("r/" + job_id(1) + ".h5")); });
  expect_error(ErrorKind::kNotFound, [&] { CampaignSource::open(path("nope.h5")); });
  expect_error(ErrorKind::kNotFound, [&] { (void)file.job("ffffffffffff"); });
}

TEST_F(MergeTest, DigestModelTimesFollowTheDefinition) {
  JobResult r = synthetic_job(SyntheticJobSpec{});
  r.steps.clear();
  // Two ranks, two iterations, prefill + one decode step.
  auto step = [&](int64_t it, const char* name, int64_t rank, double total, double compute, double comm) {
    r.steps.push_back({"baseline", it, name, rank, total, compute, comm});
  };
  step(0, "prefill", 0, 1.0, 0.6, 0.2);
  step(0, "prefill", 1, 2.0, 1.0, 0.4);
  step(0, "decode.0", 0, 0.5, 0.3, 0.1);
  step(0, "decode.0", 1, 0.7, 0.5, 0.1);
  step(1, "prefill", 0, 3.0, 2.0, 0.2);
  step(1, "prefill", 1, 1.0, 0.5, 0.2);
  step(1, "decode.0", 0, 1.0, 0.5, 0.1);
  step(1, "decode.0", 1, 1.0, 0.5, 0.1);
  job_result_write(path("j.h5"), r);
  const JobDigest d = job_digest_read(h5::File::open_read(path("j.h5")));
  // Iteration 0: max 2.0 + 0.7 = 2.7; iteration 1: 3.0 + 1.0 = 4.0; median 3.35.
  EXPECT_NEAR(d.baseline.model_s, 3.35, 1e-12);
  // Compute, mean over ranks: iteration 0: 0.8 + 0.4 = 1.2; iteration 1: 1.25 + 0.5 = 1.75.
  EXPECT_NEAR(d.baseline.compute_s, 1.475, 1e-12);
  EXPECT_NEAR(d.baseline.comm_s, (0.4 + 0.3) / 2, 1e-12);
  EXPECT_EQ(d.baseline.iterations, 2);
  EXPECT_FALSE(d.selected.present);
}

}  // namespace
}  // namespace fk::results
