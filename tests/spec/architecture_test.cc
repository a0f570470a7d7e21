// Architecture parsing: defaults, presets and derived values.
#include "core/spec/architecture_load.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fk::testing {
namespace {

spec::ArchitectureDoc parse_ok(const std::string& text) {
  spec::Diagnostics diags;
  auto node = spec::yaml_load_string(text, "t.yaml", diags);
  EXPECT_TRUE(node.has_value());
  auto doc = spec::architecture_parse(*node, "t.yaml", diags);
  EXPECT_TRUE(diags.ok()) << diags.to_string();
  EXPECT_TRUE(doc.has_value());
  return *doc;
}

TEST(Architecture, DefaultsAndDerivedValues) {
  std::string t = replace_line(base_architecture_yaml(), "num_key_value_heads: 8", "# mha");
  t = replace_line(t, "head_dim: 128", "# derived");
  t = replace_line(t, "num_key_value_heads: 2", "num_key_value_heads: 8");
  t = replace_line(t, "head_dim: 16", "head_dim: 16");
  const auto doc = parse_ok(t);
  EXPECT_EQ(doc.full.num_key_value_heads, 32);  // defaults to MHA
  EXPECT_EQ(doc.full.head_dim, 128);            // hidden / heads
  EXPECT_EQ(doc.full.attention_kind(), "MHA");
  EXPECT_EQ(doc.full.dtype, DType::kBF16);
  EXPECT_TRUE(doc.full.attention.causal);
  EXPECT_EQ(doc.full.norm.placement, spec::NormPlacement::kPre);
  EXPECT_TRUE(doc.full.mlp.gated);
  EXPECT_DOUBLE_EQ(doc.full.attention_scale(), 1.0 / std::sqrt(128.0));
  EXPECT_EQ(doc.full.rotary_dim(), 128);
}

TEST(Architecture, PresetOverridesOnlyWhatItNames) {
  const auto doc = parse_ok(base_architecture_yaml());
  const auto tiny = doc.select("tiny");
  ASSERT_TRUE(tiny.has_value());
  EXPECT_EQ(tiny->preset, "tiny");
  EXPECT_EQ(tiny->hidden_size, 128);
  EXPECT_EQ(tiny->num_key_value_heads, 2);
  EXPECT_EQ(tiny->max_position_embeddings, 8192);  // inherited
  EXPECT_DOUBLE_EQ(tiny->norm.eps, 1e-5);           // inherited
  EXPECT_EQ(doc.full.hidden_size, 4096);            // base untouched
  EXPECT_FALSE(doc.select("small").has_value());
  EXPECT_EQ(doc.preset_names(), (std::vector<std::string>{"full", "tiny"}));
}

TEST(Architecture, NestedPresetOverrideKeepsSiblings) {
  std::string t = replace_line(base_architecture_yaml(), "causal: true", "causal: true\n  sliding_window: 4096");
  t += "    attention: {sliding_window: 16}\n";
  const auto doc = parse_ok(t);
  const auto tiny = *doc.select("tiny");
  EXPECT_EQ(tiny.attention.sliding_window, 16);
  EXPECT_TRUE(tiny.attention.causal);
  EXPECT_EQ(doc.full.attention.sliding_window, 4096);
}

TEST(Architecture, LayerPatternRepeats) {
  std::string t = replace_line(base_architecture_yaml(), "causal: true",
                               "causal: true\n  sliding_window: 512\n  layer_types: [sliding, sliding, full]");
  t = replace_line(t, "num_hidden_layers: 2", "num_hidden_layers: 3");
  const auto a = parse_ok(t).full;
  EXPECT_EQ(a.layer_type(0), spec::LayerType::kSliding);
  EXPECT_EQ(a.layer_type(2), spec::LayerType::kFull);
  EXPECT_EQ(a.layer_type(3), spec::LayerType::kSliding);
  EXPECT_EQ(a.layer_type(5), spec::LayerType::kFull);
}

TEST(Architecture, WindowWithoutPatternMakesEveryLayerSliding) {
  const std::string t = replace_line(base_architecture_yaml(), "causal: true", "causal: true\n  sliding_window: 64");
  const auto a = parse_ok(t).full;
  for (int l = 0; l < 32; ++l) EXPECT_EQ(a.layer_type(l), spec::LayerType::kSliding);
}

TEST(Architecture, MoeLayersStartAfterDenseOnes) {
  const std::string t = base_architecture_yaml() +
                        "moe: {num_experts: 8, experts_per_token: 2, moe_intermediate_size: 64, "
                        "first_dense_layers: 1}\n";
  const auto a = parse_ok(t).full;
  EXPECT_FALSE(a.layer_is_moe(0));
  EXPECT_TRUE(a.layer_is_moe(1));
  EXPECT_TRUE(a.moe.renormalize);
}

TEST(Architecture, QueryPreAttnScalarSetsTheScale) {
  const std::string t =
      replace_line(base_architecture_yaml(), "causal: true", "causal: true\n  query_pre_attn_scalar: 256");
  EXPECT_DOUBLE_EQ(parse_ok(t).full.attention_scale(), 1.0 / 16.0);
}

}  // namespace
}  // namespace fk::testing
