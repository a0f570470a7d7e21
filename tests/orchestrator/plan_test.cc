// Plan expansion: counts, order, stable ids, unfit layouts.
#include "orchestrator/plan.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace fk::testing {
namespace {

class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    specs_.write("architectures/m.yaml", base_architecture_yaml());
    std::string other = replace_line(base_architecture_yaml(), "name: test-model", "name: other");
    other = replace_line(other, "num_attention_heads: 8", "num_attention_heads: 16");
    other = replace_line(other, "num_key_value_heads: 2", "num_key_value_heads: 4");
    other = replace_line(other, "hidden_size: 128", "hidden_size: 256");
    other = replace_line(other, "intermediate_size: 256", "intermediate_size: 252");
    specs_.write("architectures/other.yaml", other);
    specs_.write("workloads/w.yaml", "kind: workload\nname: w\nphase: prefill\nbatch: 4\nseq_len: 16\n");
    specs_.write("workloads/d.yaml", "kind: workload\nname: d\nphase: decode\nbatch: 2\nseq_len: 16\ndecode_steps: 2\n");
  }
  std::optional<orchestrator::Plan> plan(const std::string& body, spec::Diagnostics& diags) {
    const std::string file = specs_.write("campaigns/c.yaml", body);
    auto c = spec::campaign_load_file(file, diags);
    if (!c) return std::nullopt;
    return orchestrator::plan_campaign(*c, diags);
  }
  TempSpecs specs_;
};

TEST_F(PlanTest, ExpandsTheCrossProductInOrder) {
  spec::Diagnostics diags;
  auto p = plan("kind: campaign\nname: c\nscale: tiny\narchitectures: [m]\nworkloads: [w, d]\n"
                "layouts: [tp1, tp2, tp2pp2]\nrepetitions: 2\ncandidate_sets: {baseline: {}, other: {}}\n",
                diags);
  ASSERT_TRUE(p.has_value()) << diags.to_string();
  const auto& jobs = p->job_file.jobs;
  ASSERT_EQ(jobs.size(), 1u * 2 * 3 * 2 * 2);
  EXPECT_EQ(jobs[0].workload.name, "w");
  EXPECT_EQ(jobs[0].layout.name(), "tp1pp1dp1");
  EXPECT_EQ(jobs[0].candidates.name, "baseline");
  EXPECT_EQ(jobs[1].repetition, 1);
  EXPECT_EQ(jobs[2].candidates.name, "other");
  EXPECT_EQ(jobs.back().layout.name(), "tp2pp2dp1");
  EXPECT_EQ(jobs[0].arch.preset, "tiny");
  std::set<std::string> ids;
  for (const auto& j : jobs) ids.insert(j.id);
  EXPECT_EQ(ids.size(), jobs.size()) << "ids are unique";
  const auto t = orchestrator::plan_totals(*p);
  EXPECT_EQ(t.jobs, 24);
  EXPECT_EQ(t.max_ranks, 4);
  EXPECT_EQ(t.rank_slots, 2 * 2 * 2 * (1 + 2 + 4));
}

TEST_F(PlanTest, IdsDoNotChangeWhenUnrelatedJobsAreAdded) {
  spec::Diagnostics diags;
  auto small = plan("kind: campaign\nname: c\nscale: tiny\narchitectures: [m]\nworkloads: [w]\nlayouts: [tp2]\n", diags);
  auto big = plan("kind: campaign\nname: renamed\nscale: tiny\narchitectures: [other, m]\nworkloads: [d, w]\n"
                  "layouts: [tp1, tp2]\n",
                  diags);
  ASSERT_TRUE(small && big) << diags.to_string();
  const std::string id = small->job_file.jobs[0].id;
  int matches = 0;
  for (const auto& j : big->job_file.jobs) matches += j.id == id;
  EXPECT_EQ(matches, 1);
}

TEST_F(PlanTest, UnfitLayoutIsAnErrorAtItsLineOrASkip) {
  const std::string body = "kind: campaign\nname: c\nscale: tiny\narchitectures: [m, other]\nworkloads: [w]\n"
                           "layouts:\n  - tp1\n  - tp8\n";
  spec::Diagnostics diags;
  EXPECT_FALSE(plan(body, diags).has_value());
  ASSERT_FALSE(diags.ok());
  EXPECT_EQ(diags.items()[0].pos.line, 8);
  EXPECT_NE(diags.items()[0].message.find("tp8pp1dp1 does not fit other (tiny) x w: tp (8) does not divide intermediate_size (252)"), std::string::npos)
      << diags.to_string();
  spec::Diagnostics d2;
  auto p = plan(body + "unfit_layouts: skip\n", d2);
  ASSERT_TRUE(p.has_value()) << d2.to_string();
  EXPECT_EQ(p->job_file.jobs.size(), 3u);
  ASSERT_EQ(p->skipped.size(), 1u);
  EXPECT_EQ(p->skipped[0].architecture, "other");
  EXPECT_NE(orchestrator::plan_format_table(*p).find("skipped: other x w x tp8pp1dp1"), std::string::npos);
}

// Each job's estimate is the one of the campaign's model_stage.reference: a streamed
// reference needs less than a resident one, and auto estimates as resident.
TEST_F(PlanTest, MemoryEstimateFollowsTheReferenceWeights) {
  const std::string body = "kind: campaign\nname: c\nscale: tiny\narchitectures: [m]\nworkloads: [d]\nlayouts: [tp1]\n";
  std::map<std::string, int64_t> mem;
  for (const std::string r : {"auto", "resident", "streamed"}) {
    spec::Diagnostics diags;
    auto p = plan(body + "model_stage: {reference: " + r + "}\n", diags);
    ASSERT_TRUE(p.has_value()) << diags.to_string();
    ASSERT_EQ(p->job_file.jobs.size(), 1u);
    const spec::Job& j = p->job_file.jobs[0];
    mem[r] = j.memory.total();
    const auto want = r == "streamed" ? spec::ReferenceWeights::kStreamed : spec::ReferenceWeights::kResident;
    EXPECT_EQ(mem[r], spec::memory_estimate(j.arch, j.workload, j.layout, j.backend, want).total()) << r;
  }
  EXPECT_EQ(mem["auto"], mem["resident"]);
  EXPECT_LT(mem["streamed"], mem["resident"]);
}

TEST_F(PlanTest, JsonAndTableAgree) {
  spec::Diagnostics diags;
  auto p = plan("kind: campaign\nname: c\nscale: tiny\narchitectures: [m]\nworkloads: [w]\nlayouts: [tp1, pp2]\n", diags);
  ASSERT_TRUE(p.has_value());
  const auto j = orchestrator::plan_to_json(*p);
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][1]["pp"], 2);
  const std::string table = orchestrator::plan_format_table(*p);
  EXPECT_NE(table.find(p->job_file.jobs[1].id), std::string::npos);
  EXPECT_NE(table.find("total: 2 jobs, 3 rank-slots"), std::string::npos) << table;
}

// Every shipped campaign plans; the smoke, nightly and scaling campaigns into many jobs.
TEST(ShippedCampaigns, EveryCampaignPlans) {
  size_t planned = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FK_SOURCE_DIR) + "/specs/campaigns")) {
    const std::string name = e.path().stem().string();
    spec::Diagnostics diags;
    auto c = spec::campaign_load_file(e.path().string(), diags);
    ASSERT_TRUE(c.has_value()) << name << ": " << diags.to_string();
    auto p = orchestrator::plan_campaign(*c, diags);
    ASSERT_TRUE(p.has_value()) << name << ": " << diags.to_string();
    EXPECT_FALSE(p->job_file.jobs.empty()) << name;
    if (name == "smoke" || name == "nightly" || name == "scaling") {
      EXPECT_GT(p->job_file.jobs.size(), 10u) << name;
    }
    ++planned;
  }
  EXPECT_GE(planned, 6u);
}

// The scaling campaign (issue 13): three models, every layout of 1-8 GPUs, the baseline
// and the example candidates; the 70B model's bf16 weights need several of them.
TEST(ShippedCampaigns, ScalingCoversEveryLayoutAndNeedsSeveralGpusForTheLargest) {
  spec::Diagnostics diags;
  auto c = spec::campaign_load_file(std::string(FK_SOURCE_DIR) + "/specs/campaigns/scaling.yaml", diags);
  ASSERT_TRUE(c.has_value()) << diags.to_string();
  auto p = orchestrator::plan_campaign(*c, diags);
  ASSERT_TRUE(p.has_value()) << diags.to_string();
  std::set<std::string> layouts, sets;
  int64_t biggest_tp1 = 0;
  for (const auto& j : p->job_file.jobs) {
    layouts.insert(j.layout.name());
    sets.insert(j.candidates.name);
    if (j.layout.ranks() == 1 && j.arch.name == "llama-3.1-70b") biggest_tp1 = std::max(biggest_tp1, j.memory.total());
  }
  EXPECT_EQ(layouts,
            (std::set<std::string>{"tp1pp1dp1", "tp2pp1dp1", "tp4pp1dp1", "tp8pp1dp1", "tp2pp2dp1", "tp4pp2dp1"}));
  EXPECT_EQ(sets, (std::set<std::string>{"baseline", "examples"}));
  EXPECT_GT(biggest_tp1, int64_t{141'000'000'000}) << "the 70B model's tp1 jobs fit one 141 GB H200";
}

}  // namespace
}  // namespace fk::testing
