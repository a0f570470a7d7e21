// Jamba's spec side: the shipped spec loads as published (Mamba layers but 4, 12, 20,
// 28; MoE in the odd layers) and round-trips; its parameter count is the published
// 51.6B; attention layers cache keys and values, Mamba layers a fixed state; bad `mamba:`
// fields are errors at their line. fk import-hf for model_type jamba gives the shipped
// spec from the published config, and keys it cannot honour are refused naming them.
// The section's version 2 (Mamba-2 layers, Bamba): its fields, rules, misfits and state,
// and fk import-hf for model_type bamba.
#include "core/error.h"
#include "core/spec/architecture_write.h"
#include "core/spec/families/mamba_layers.h"
#include "core/spec/family.h"
#include "core/spec/hf_config.h"
#include "core/spec/memory.h"
#include "core/spec/spec_file.h"
#include "core/spec/workload.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

namespace fk::testing {
namespace {

using Json = nlohmann::json;

std::string shipped_text() { return shipped_architecture_text("jamba-v0.1"); }

spec::ArchitectureDoc shipped_doc() {
  spec::Diagnostics d;
  const auto doc = spec::spec_load_string(shipped_text(), "j.yaml", d);
  EXPECT_TRUE(doc.has_value()) << d.to_string();
  return std::get<spec::ArchitectureDoc>(*doc);
}

TEST(JambaSpec, ShippedSpecRoundTripsAndCountsThePublishedParameters) {
  const spec::Architecture a = shipped_doc().full;
  const spec::MambaLayersSpec& m = a.sections.get<spec::MambaLayersSpec>();
  EXPECT_EQ(m.inner_size, 8192);
  EXPECT_EQ(m.attention_layers, (std::vector<int64_t>{4, 12, 20, 28}));
  for (int64_t l = 0; l < a.num_hidden_layers; ++l) {
    EXPECT_EQ(spec::is_mamba_layer(a, l), l % 8 != 4) << l;
    EXPECT_EQ(a.layer_is_moe(l), l % 2 == 1) << l;
  }
  EXPECT_EQ(spec::family_rules(a).category(a), spec::FastKernelsCategory::kLinearAttentionSsm);
  expect_round_trip(a);
  const spec::Workload w = test_workload(2, 1000);
  const spec::MemoryEstimate e = spec::memory_estimate(a, w, {1, 1, 1}, DeviceKind::kCuda);
  // Jamba v0.1: 51.6B parameters (its model card says 52B).
  EXPECT_NEAR(static_cast<double>(e.parameters), 51.57e9, 0.02e9);
  // 4 attention layers x K and V x 2 sequences x 1000 positions x 8 kv heads x 128 x 4
  // bytes, plus 28 Mamba layers x 2 sequences x (3 conv + 16 state) x 8192 channels x 4.
  EXPECT_EQ(e.kv_cache_bytes, 4LL * 2 * 2 * 1000 * 8 * 128 * 4 + 28LL * 2 * (3 + 16) * 8192 * 4);
  // TP splits the mixer's channels too: 16 ranks hold 512 each.
  EXPECT_TRUE(spec::layout_misfits(a, w, {16, 1, 1}).empty());
  EXPECT_LT(spec::memory_estimate(a, w, {2, 1, 1}, DeviceKind::kCuda).parameters, e.parameters * 6 / 10);
}

TEST(JambaSpec, ATpThatSplitsNoMixerChannelsEvenlyIsAMisfit) {
  spec::Architecture a = shipped_doc().full;
  a.sections.edit<spec::MambaLayersSpec>().inner_size = 8196;  // 4 x 2049
  const spec::Workload w = test_workload(8, 16);
  EXPECT_TRUE(spec::layout_misfits(a, w, {4, 1, 1}).empty());
  const auto misfit = spec::layout_misfits(a, w, {8, 1, 1});
  ASSERT_EQ(misfit.size(), 1u);
  EXPECT_NE(misfit[0].find("mamba.inner_size (8196)"), std::string::npos) << misfit[0];
}

TEST(JambaSpec, BadMambaFieldsAreErrorsAtTheirLine) {
  const std::string base = shipped_text();
  std::string e =
      load_errors(replaced(base, "  attention_layers: [4, 12, 20, 28]", "  attention_layers: [4, 12, 12, 28]"));
  EXPECT_NE(e.find("mamba.attention_layers"), std::string::npos) << e;
  EXPECT_NE(e.find("ascending order"), std::string::npos) << e;
  EXPECT_NE(e.find("test.yaml:"), std::string::npos) << e;
  e = load_errors(replaced(base, "  attention_layers: [4, 12, 20, 28]", "  attention_layers: [4, 32]"));
  EXPECT_NE(e.find("is not a layer of a 32-layer model"), std::string::npos) << e;
  e = load_errors(replaced(base, "  inner_size: 8192\n", ""));
  EXPECT_NE(e.find("mamba.inner_size"), std::string::npos) << e;
  e = load_errors(replaced(base, "  state_size: 16\n", "  state_size: 0\n"));
  EXPECT_NE(e.find("mamba.state_size"), std::string::npos) << e;
  e = load_errors(replaced(base, "mlp: {activation: silu,", "mlp: {activation: gelu,"));
  EXPECT_NE(e.find("the Mamba mixer's activation is silu"), std::string::npos) << e;
  e = load_errors(replaced(base, "norm: {kind: rmsnorm,", "norm: {kind: layernorm,"));
  EXPECT_NE(e.find("mamba.inner_norms are RMSNorms"), std::string::npos) << e;
  e = load_errors(replaced(base, "  inner_norms: true\n", "  inner_norms: yes please\n"));
  EXPECT_NE(e.find("mamba.inner_norms"), std::string::npos) << e;
  // A preset changes sizes only: not a switch of the mixer, not whether attention is kept.
  e = load_errors(replaced(base, "time_step_rank: 4, attention_layers: [4]}",
                           "time_step_rank: 4, attention_layers: [4], inner_norms: false}"));
  EXPECT_NE(e.find("changes the structure of the full model"), std::string::npos) << e;
  e = load_errors(
      replaced(base, "time_step_rank: 4, attention_layers: [4]}", "time_step_rank: 4, attention_layers: []}"));
  EXPECT_NE(e.find("changes the structure of the full model"), std::string::npos) << e;
  // Every layer attention: no Mamba layer is left.
  std::string all = "  attention_layers: [";
  for (int l = 0; l < 32; ++l) all += (l ? ", " : "") + std::to_string(l);
  e = load_errors(replaced(base, "  attention_layers: [4, 12, 20, 28]", all + "]"));
  EXPECT_NE(e.find("no Mamba layer is left"), std::string::npos) << e;
  // The section belongs to the transformer family.
  e = load_errors(replaced(base, "model_type: jamba\n", "model_type: jamba\nmodel_family: mamba\n"));
  EXPECT_NE(e.find("mamba"), std::string::npos) << e;
}

// The published config (shared/reference/architectures.yaml).
Json jamba() {
  return Json::parse(R"({
    "architectures": ["JambaForCausalLM"], "model_type": "jamba", "attention_dropout": 0.0,
    "attn_layer_offset": 4, "attn_layer_period": 8, "bos_token_id": 1, "eos_token_id": 2,
    "expert_layer_offset": 1, "expert_layer_period": 2, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 14336, "mamba_conv_bias": true, "mamba_d_conv": 4,
    "mamba_d_state": 16, "mamba_dt_rank": 256, "mamba_expand": 2, "mamba_proj_bias": false,
    "max_position_embeddings": 262144, "num_attention_heads": 32, "num_experts": 16, "num_experts_per_tok": 2,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "num_logits_to_keep": 1, "output_router_logits": false,
    "pad_token_id": 0, "rms_norm_eps": 1e-06, "router_aux_loss_coef": 0.001, "sliding_window": null,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.40.0.dev0",
    "use_cache": true, "use_mamba_kernels": true, "vocab_size": 65536})");
}

std::string import_error(const Json& config) { return hf_import_error(config, "j/config.json"); }

TEST(HfImportJamba, PublishedConfigGivesTheShippedSpec) {
  const spec::Architecture a = spec::hf_config_import(jamba(), "j/config.json").arch;
  const spec::Architecture want = shipped_doc().full;
  EXPECT_EQ(a.family, "jamba");
  EXPECT_EQ(a.model_family, "transformer");
  expect_same_model(a, want);
  // "auto" dt rank is ceil(hidden / 16); one expert a layer is a dense model.
  Json c = jamba();
  c["mamba_dt_rank"] = "auto";
  c["num_experts"] = 1;
  const spec::Architecture dense = spec::hf_config_import(c, "j/config.json").arch;
  EXPECT_EQ(dense.sections.get<spec::MambaLayersSpec>().time_step_rank, 256);
  EXPECT_FALSE(dense.moe.enabled());
}

TEST(HfImportJamba, WhatItCannotHonourIsRefusedNamingTheKey) {
  expect_hf_import_errors(jamba(),
                          {{"sliding_window", 4096, "expected null"},
                           {"hidden_act", "gelu", "the Mamba mixer's activation"},
                           {"attn_layer_offset", 8, "attn_layer_offset"},
                           {"mamba_dt_rank", "big", "an integer or \"auto\""},
                           {"mamba_d_conv", 16, "mamba_d_conv"},
                           {"rope_theta", 10000.0, "rope_theta"}},
                          "j/config.json");
  Json all_attention = jamba();
  all_attention["attn_layer_period"] = 1;
  all_attention["attn_layer_offset"] = 0;
  const std::string e = import_error(all_attention);
  EXPECT_NE(e.find("attn_layer_period"), std::string::npos) << e;
  EXPECT_NE(e.find("no Mamba layer is left"), std::string::npos) << e;
}

// Jamba's spec with Mamba-2 layers of 8 heads of 16 in 2 groups in place of its own.
std::string with_mamba2(std::string text) {
  text = replaced(text, "  time_step_rank: 256\n", "");
  text = replaced(text, "  inner_norms: true\n", "  version: 2\n  num_heads: 128\n  head_dim: 64\n  n_groups: 8\n");
  return replaced(text, "mamba: {inner_size: 128, state_size: 8, time_step_rank: 4, attention_layers: [4]}",
                  "mamba: {inner_size: 128, state_size: 8, num_heads: 8, head_dim: 16, n_groups: 2, "
                  "attention_layers: [4]}");
}

TEST(JambaSpec, Mamba2LayersHaveHeadsGroupsAndTheirOwnState) {
  spec::Diagnostics d;
  const auto doc = spec::spec_load_string(with_mamba2(shipped_text()), "m2.yaml", d);
  ASSERT_TRUE(doc.has_value()) << d.to_string();
  const spec::Architecture a = std::get<spec::ArchitectureDoc>(*doc).full;
  const spec::MambaLayersSpec& m = a.sections.get<spec::MambaLayersSpec>();
  EXPECT_TRUE(m.mamba2());
  EXPECT_FALSE(m.inner_norms);
  EXPECT_EQ(m.conv_dim(), 8192 + 2 * 8 * 16);
  const std::string written = expect_round_trip(a);
  EXPECT_EQ(written.find("time_step_rank"), std::string::npos) << written;
  EXPECT_EQ(written.find("inner_norms"), std::string::npos) << written;
  // 28 Mamba layers x 2 sequences x (3 conv rows of x, B and C + 16 states x 8192) x 4.
  const spec::Workload w = test_workload(2, 1000);
  EXPECT_EQ(spec::memory_estimate(a, w, {1, 1, 1}, DeviceKind::kCuda).kv_cache_bytes,
            4LL * 2 * 2 * 1000 * 8 * 128 * 4 + 28LL * 2 * (3 * (8192 + 2 * 8 * 16) + 16 * 8192) * 4);
  EXPECT_TRUE(spec::layout_misfits(a, w, {8, 1, 1}).empty());
  const auto misfit = spec::layout_misfits(a, w, {16, 1, 1});  // 16 ranks, 8 groups
  ASSERT_EQ(misfit.size(), 1u);
  EXPECT_NE(misfit[0].find("mamba.n_groups (8)"), std::string::npos) << misfit[0];
  // The tiny preset keeps the version and runs 2 groups on 2 ranks.
  const spec::Architecture t = *std::get<spec::ArchitectureDoc>(*doc).select("tiny");
  EXPECT_TRUE(t.sections.get<spec::MambaLayersSpec>().mamba2());
  EXPECT_TRUE(spec::layout_misfits(t, test_workload(2, 16), {2, 1, 1}).empty());
}

TEST(JambaSpec, BadMamba2FieldsAreErrorsAtTheirLine) {
  const std::string base = with_mamba2(shipped_text());
  std::string e = load_errors(replaced(base, "  head_dim: 64\n", "  head_dim: 32\n"));
  EXPECT_NE(e.find("num_heads x head_dim (128 x 32) must be inner_size (8192)"), std::string::npos) << e;
  e = load_errors(replaced(base, "  n_groups: 8\n", "  n_groups: 3\n"));
  EXPECT_NE(e.find("n_groups (3) must divide num_heads (128)"), std::string::npos) << e;
  e = load_errors(replaced(base, "  version: 2\n", "  version: 2\n  time_step_rank: 256\n"));
  EXPECT_NE(e.find("mamba.time_step_rank: applies to version 1"), std::string::npos) << e;
  e = load_errors(replaced(base, "  version: 2\n", "  version: 2\n  inner_norms: true\n"));
  EXPECT_NE(e.find("mamba.inner_norms: applies to version 1"), std::string::npos) << e;
  e = load_errors(replaced(base, "  version: 2\n", "  version: 3\n"));
  EXPECT_NE(e.find("mamba.version"), std::string::npos) << e;
  e = load_errors(replaced(shipped_text(), "  inner_norms: true\n", "  inner_norms: true\n  n_groups: 2\n"));
  EXPECT_NE(e.find("mamba.n_groups: applies to version 2"), std::string::npos) << e;
  e = load_errors(
      replaced(base, "  version: 2\n", "  version: 2\n  time_step_limit_min: 0.5\n  time_step_limit_max: 0.1\n"));
  EXPECT_NE(e.find("above time_step_limit_max"), std::string::npos) << e;
}

// A Bamba config (BambaConfig's keys; sizes cut down), as transformers writes it.
Json bamba() {
  return Json::parse(R"({
    "architectures": ["BambaForCausalLM"], "model_type": "bamba", "vocab_size": 128256, "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "hidden_act": "silu", "rms_norm_eps": 1e-05, "max_position_embeddings": 262144, "tie_word_embeddings": false,
    "rope_theta": 10000.0, "attn_layer_indices": [9, 18, 27], "mamba_n_heads": 128, "mamba_d_head": 64,
    "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256,
    "mamba_conv_bias": true, "mamba_proj_bias": false, "z_loss_coefficient": 0.0, "num_logits_to_keep": 1,
    "attention_dropout": 0.0, "torch_dtype": "bfloat16", "use_cache": true})");
}

TEST(HfImportBamba, Mamba2LayersButTheAttentionIndicesWithHalfRotatedHeads) {
  const spec::Architecture a = spec::hf_config_import(bamba(), "b/config.json").arch;
  EXPECT_EQ(a.family, "bamba");
  EXPECT_EQ(a.model_family, "transformer");
  const spec::MambaLayersSpec& m = a.sections.get<spec::MambaLayersSpec>();
  EXPECT_TRUE(m.mamba2());
  EXPECT_EQ(m.inner_size, 8192);
  EXPECT_EQ(m.num_heads, 128);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.n_groups, 1);
  EXPECT_EQ(m.state_size, 128);
  EXPECT_EQ(m.attention_layers, (std::vector<int64_t>{9, 18, 27}));
  EXPECT_FALSE(m.inner_norms);
  EXPECT_EQ(a.position.kind, spec::PositionKind::kRope);
  EXPECT_DOUBLE_EQ(a.position.partial_rotary_factor, 0.5);
  EXPECT_FALSE(a.moe.enabled());
  EXPECT_EQ(spec::family_rules(a).category(a), spec::FastKernelsCategory::kLinearAttentionSsm);
  Json c = bamba();
  c["mamba_d_head"] = "auto";
  EXPECT_EQ(spec::hf_config_import(c, "b/config.json").arch.sections.get<spec::MambaLayersSpec>().head_dim, 64);
  c["time_step_limit"] = Json::parse(R"([0.0, "Infinity"])");
  EXPECT_NO_THROW(spec::hf_config_import(c, "b/config.json"));
  expect_hf_import_errors(bamba(),
                          {{"mamba_d_head", 32, "mamba_n_heads x mamba_d_head (128 x 32)"},
                           {"mamba_n_heads", 100, "does not divide the mixer's width"},
                           {"attn_layer_indices", Json::parse("[9, 40]"), "a layer index in [0, 32)"},
                           {"time_step_limit", Json::parse("[0.001, 0.1]"), "BambaMixer runs dt unclamped"},
                           {"hidden_act", "gelu", "the Mamba mixer's activation"},
                           {"mlp_bias", true, "mlp_bias"}},
                          "b/config.json");
}

// A GraniteMoeHybrid config (Granite 4.0-H's keys; sizes cut down), as transformers
// writes it: every third layer attention, the rest Bamba's Mamba-2 mixer.
Json granite_hybrid() {
  return Json::parse(R"({
    "architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid", "vocab_size": 100352,
    "hidden_size": 1536, "intermediate_size": 512, "shared_intermediate_size": 1024, "num_hidden_layers": 6,
    "num_attention_heads": 12, "num_key_value_heads": 4, "hidden_act": "silu", "rms_norm_eps": 1e-05,
    "max_position_embeddings": 131072, "tie_word_embeddings": true, "embedding_multiplier": 12.0,
    "residual_multiplier": 0.22, "attention_multiplier": 0.0078125, "logits_scaling": 6.0,
    "num_local_experts": 64, "num_experts_per_tok": 6, "output_router_logits": false, "router_aux_loss_coef": 0.0,
    "position_embedding_type": "nope", "rope_theta": 10000,
    "layer_types": ["mamba", "mamba", "attention", "mamba", "mamba", "attention"], "mamba_n_heads": 48,
    "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4, "mamba_expand": 2,
    "mamba_chunk_size": 256, "mamba_conv_bias": true, "mamba_proj_bias": false, "attention_bias": false,
    "torch_dtype": "bfloat16", "use_cache": true})");
}

TEST(HfImportGraniteMoeHybrid, GraniteLayersWithMamba2MixersByLayerType) {
  const spec::Architecture a = spec::hf_config_import(granite_hybrid(), "g/config.json").arch;
  EXPECT_EQ(a.family, "granite");
  EXPECT_EQ(a.model_family, "transformer");
  const spec::MambaLayersSpec& m = a.sections.get<spec::MambaLayersSpec>();
  EXPECT_TRUE(m.mamba2());
  EXPECT_EQ(m.inner_size, 3072);
  EXPECT_EQ(m.num_heads, 48);
  EXPECT_EQ(m.attention_layers, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(a.position.kind, spec::PositionKind::kNone);  // "nope": attention without positions
  EXPECT_EQ(a.moe.num_experts, 64);
  EXPECT_EQ(a.moe.experts_per_token, 6);
  EXPECT_EQ(a.moe.moe_intermediate_size, 512);
  EXPECT_TRUE(a.moe.renormalize);
  EXPECT_EQ(a.moe.shared_experts, 1);
  EXPECT_EQ(a.moe.shared_intermediate_size, 1024);
  ASSERT_TRUE(a.attention.scale.has_value());
  EXPECT_DOUBLE_EQ(*a.attention.scale, 0.0078125);
  EXPECT_DOUBLE_EQ(*a.norm.residual_multiplier, 0.22);
  // Dense (num_local_experts 0): the shared MLP alone is the layer's MLP; rope when asked.
  Json dense = granite_hybrid();
  dense["num_local_experts"] = 0;
  dense["position_embedding_type"] = "rope";
  const spec::Architecture d = spec::hf_config_import(dense, "g/config.json").arch;
  EXPECT_FALSE(d.moe.enabled());
  EXPECT_EQ(d.intermediate_size, 1024);
  EXPECT_EQ(d.position.kind, spec::PositionKind::kRope);
  EXPECT_DOUBLE_EQ(d.position.partial_rotary_factor, 1.0);
  // No layer_types: every layer a Mamba layer.
  Json all_mamba = granite_hybrid();
  all_mamba.erase("layer_types");
  EXPECT_TRUE(spec::hf_config_import(all_mamba, "g/config.json")
                  .arch.sections.get<spec::MambaLayersSpec>()
                  .attention_layers.empty());
  // transformers 5 writes the kinds as "linear_attention" and "full_attention".
  Json v5 = granite_hybrid();
  for (auto& t : v5["layer_types"]) t = t == "attention" ? "full_attention" : "linear_attention";
  EXPECT_EQ(spec::hf_config_import(v5, "g/config.json").arch.sections.get<spec::MambaLayersSpec>().attention_layers,
            (std::vector<int64_t>{2, 5}));
  expect_hf_import_errors(
      granite_hybrid(),
      {{"layer_types", Json::parse(R"(["mamba"])"), "a list of 6 entries"},
       {"layer_types", Json::parse(R"(["mamba", "mamba", "moe", "mamba", "mamba", "attention"])"),
        "\"mamba\" or \"attention\""},
       {"layer_types", Json::parse(R"(["attention", "attention", "attention", "attention", "attention", "attention"])"),
        "no Mamba layer is left"},
       {"position_embedding_type", "alibi", "\"rope\" or null"},
       {"num_local_experts", 1, "expected 0 (the shared MLP alone) or at least 2"},
       {"mamba_n_heads", 100, "does not divide the mixer's width"},
       {"hidden_act", "gelu", "the Mamba mixer's activation"}},
      "g/config.json");
}

}  // namespace
}  // namespace fk::testing
