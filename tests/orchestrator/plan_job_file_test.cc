// A large plan through the job file (GitHub issue 9): every job reads back equal, and
// the file stays small because each architecture and workload is stored once.
#include "core/spec/job.h"
#include "orchestrator/plan.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fk::testing {
namespace {

// The shipped architectures and workloads at full size, in six layouts (unfit ones
// skipped), two candidate sets and 20 repetitions: about 5,000 jobs.
std::optional<orchestrator::Plan> plan_large(const TempSpecs& dir, spec::Diagnostics& diags) {
  const std::string file = dir.write(
      "campaigns/large.yaml",
      "kind: campaign\nname: large\nscale: full\nrepetitions: 20\nspecs_dir: " + std::string(FK_SOURCE_DIR) +
          "/specs\n"
          "architectures: [llama-3.1-8b, mistral-7b, qwen3-8b, qwen2.5-7b, mixtral-8x7b, qwen3-30b-a3b, gemma-2-9b,\n"
          "                gemma-3-27b, phi-3-mini, bert-base, gpt2]\n"
          "workloads: [prefill-512, decode-b32, latency-b1, long-context-32k, encode-512]\n"
          "layouts: [tp1, tp2, tp4, tp8, tp2pp2, tp4pp2]\nunfit_layouts: skip\n"
          "candidate_sets: {baseline: {}, agent: {rms_norm: " +
          std::string(FK_SOURCE_DIR) + "/candidates/rms_norm}}\n");
  auto c = spec::campaign_load_file(file, diags);
  if (!c) return std::nullopt;
  return orchestrator::plan_campaign(*c, diags);
}

TEST(PlanJobFile, LargePlanRoundTripsAndStaysSmall) {
  TempSpecs dir;
  spec::Diagnostics diags;
  const auto plan = plan_large(dir, diags);
  ASSERT_TRUE(plan.has_value()) << diags.to_string();
  const auto& jobs = plan->job_file.jobs;
  ASSERT_GT(jobs.size(), 4000u);
  const std::string path = dir.root() + "/jobs.json";
  spec::job_file_write(path, plan->job_file);

  const spec::JobFile back = spec::job_file_read(path);
  EXPECT_EQ(back.campaign, "large");
  EXPECT_EQ(back.scale, "full");
  ASSERT_EQ(back.jobs.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    // The full form holds every field of a job.
    ASSERT_EQ(spec::job_to_json(back.jobs[i]), spec::job_to_json(jobs[i])) << "job " << i;
  }

  // Version 1 embedded both values in every job: at least its compact JSON per job
  // (2.3-2.8 KB for these architectures; the file wrote more, indented). Version 2 stores
  // each once, so a job costs its own fields only.
  const double bytes_per_job = static_cast<double>(std::filesystem::file_size(path)) / static_cast<double>(jobs.size());
  constexpr double kBound = 1024;
  EXPECT_LT(bytes_per_job, kBound);
  size_t v1_min = SIZE_MAX;
  for (const auto& j : jobs) v1_min = std::min(v1_min, spec::job_to_json(j).dump().size());
  EXPECT_GT(static_cast<double>(v1_min), kBound);
  const spec::Json doc = spec::job_file_to_json(plan->job_file);
  EXPECT_EQ(doc["architectures"].size(), 11u);
  EXPECT_EQ(doc["workloads"].size(), 5u);
}

// The table printed row by row is the table as one string.
TEST(PlanJobFile, TableStreamsRowByRow) {
  TempSpecs dir;
  spec::Diagnostics diags;
  const auto plan = plan_large(dir, diags);
  ASSERT_TRUE(plan.has_value()) << diags.to_string();
  std::string streamed;
  size_t pieces = 0;
  orchestrator::plan_write_table(*plan, [&](std::string_view s) {
    streamed += s;
    ++pieces;
  });
  EXPECT_EQ(streamed, orchestrator::plan_format_table(*plan));
  EXPECT_GT(pieces, plan->job_file.jobs.size());
}

}  // namespace
}  // namespace fk::testing
