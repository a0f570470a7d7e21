// Every spec shipped in specs/ loads, validates, names its source and has a tiny
// preset that fits the smoke layouts.
#include "core/spec/families/mamba.h"
#include "core/spec/family.h"
#include "core/spec/spec_file.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fk::testing {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> files_in(const std::string& sub) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(FK_SOURCE_DIR) / "specs" / sub))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ShippedSpecs, ElevenArchitecturesAreValidWithSourcesAndTinyPresets) {
  const auto files = files_in("architectures");
  std::set<std::string> names;
  for (const auto& f : files) {
    spec::Diagnostics diags;
    auto doc = spec::architecture_load_file(f, diags);
    ASSERT_TRUE(doc.has_value()) << diags.to_string();
    EXPECT_FALSE(doc->full.source.empty()) << f;
    EXPECT_FALSE(doc->full.hf_id.empty()) << f;
    EXPECT_EQ(fs::path(f).stem().string(), doc->full.name) << "file name matches the spec name";
    ASSERT_TRUE(doc->select("tiny").has_value()) << f;
    const auto tiny = *doc->select("tiny");
    EXPECT_LE(tiny.hidden_size, 256) << f;
    EXPECT_LE(tiny.vocab_size, 1024) << f;
    // Tiny presets must run the layouts the integration tests use (1, 2 and 4 ranks).
    spec::Workload w;
    w.batch = 4;
    w.seq_len = 32;
    w.decode_steps = tiny.attention.causal ? 2 : 0;
    w = spec::family_workload(tiny, w);  // an image model's: one pass over its images
    for (auto l : {spec::Layout{1, 1, 1}, spec::Layout{2, 1, 1}, spec::Layout{1, 2, 1}, spec::Layout{2, 2, 1},
                   spec::Layout{4, 1, 1}, spec::Layout{1, 4, 1}, spec::Layout{1, 1, 4}}) {
      const auto m = spec::layout_misfits(tiny, w, l);
      if (!spec::family_rules(tiny).not_tensor_parallel.empty() && l.tp > 1) {  // e.g. a ConvNeXt
        EXPECT_TRUE(m.size() == 1 && m[0].find("not tensor-parallel") != std::string::npos) << f << " " << l.name();
        continue;
      }
      EXPECT_TRUE(m.empty()) << f << " " << l.name() << ": " << (m.empty() ? "" : m[0]);
    }
    names.insert(doc->full.name);
  }
  for (const char* required : {"llama-3.1-8b", "mistral-7b", "qwen3-8b", "qwen2.5-7b", "mixtral-8x7b", "qwen3-30b-a3b",
                               "gemma-2-9b", "gemma-3-27b", "phi-3-mini", "bert-base", "gpt2", "mamba-2.8b",
                               "gpt-neox-20b", "gpt-oss-120b", "mamba-codestral-7b"})
    EXPECT_TRUE(names.count(required)) << required;
}

TEST(ShippedSpecs, WorkloadsAndCampaignsAreValid) {
  for (const auto& f : files_in("workloads")) {
    spec::Diagnostics diags;
    EXPECT_TRUE(spec::spec_load_file(f, diags).has_value()) << diags.to_string();
  }
  for (const auto& f : files_in("campaigns")) {
    spec::Diagnostics diags;
    EXPECT_TRUE(spec::campaign_load_file(f, diags).has_value()) << diags.to_string();
  }
}

TEST(ShippedSpecs, PublishedValuesOfKeyModels) {
  spec::Diagnostics diags;
  const auto neox = spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/gpt-neox-20b.yaml", diags);
  ASSERT_TRUE(neox.has_value()) << diags.to_string();
  EXPECT_EQ(neox->full.norm.placement, spec::NormPlacement::kParallel);
  EXPECT_EQ(neox->full.rotary_dim(), 24);
  EXPECT_FALSE(neox->full.embedding.tied);
  const auto llama = spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/llama-3.1-8b.yaml", diags);
  ASSERT_TRUE(llama.has_value());
  EXPECT_EQ(llama->full.num_key_value_heads, 8);
  EXPECT_EQ(llama->full.position.rope_scaling.type, spec::RopeScalingType::kLlama3);
  EXPECT_DOUBLE_EQ(llama->full.position.rope_theta, 500000.0);
  const auto gemma = spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/gemma-2-9b.yaml", diags);
  ASSERT_TRUE(gemma.has_value());
  EXPECT_EQ(gemma->full.layer_type(0), spec::LayerType::kSliding);
  EXPECT_EQ(gemma->full.layer_type(1), spec::LayerType::kFull);
  EXPECT_DOUBLE_EQ(*gemma->full.attention.logit_softcap, 50.0);
  EXPECT_DOUBLE_EQ(*gemma->full.head.logit_softcap, 30.0);
  const auto g3 = spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/gemma-3-27b.yaml", diags);
  ASSERT_TRUE(g3.has_value());
  for (int l = 0; l < 62; ++l)
    EXPECT_EQ(g3->full.layer_type(l), (l + 1) % 6 == 0 ? spec::LayerType::kFull : spec::LayerType::kSliding) << l;
}

}  // namespace
}  // namespace fk::testing
