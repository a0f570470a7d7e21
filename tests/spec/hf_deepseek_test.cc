// DeepSeek-V3's spec side: the shipped spec loads as published (latent attention's
// section, the grouped sigmoid routing) and round-trips; its parameter count is the
// published 671B without the multi-token-prediction layer; the latent cache is one row a
// token; bad MLA and routing fields are errors at their line. fk import-hf for
// model_type deepseek_v3 gives the shipped spec from the published config (less its fp8
// quantization_config, which is refused naming it), and keys that HF's model would not
// honour are refused naming them. DeepSeek-V2's config imports with its softmax routing
// (greedy or group-limited, never renormalised) and HF's softmax scale.
#include "core/error.h"
#include "core/spec/architecture_write.h"
#include "core/spec/families/mla.h"
#include "core/spec/hf_config.h"
#include "core/spec/memory.h"
#include "core/spec/spec_file.h"
#include "core/spec/workload.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fk::testing {
namespace {

using Json = nlohmann::json;

std::string shipped_text() { return shipped_architecture_text("deepseek-v3"); }

spec::Architecture shipped() {
  spec::Diagnostics d;
  const auto doc = spec::spec_load_string(shipped_text(), "d.yaml", d);
  EXPECT_TRUE(doc.has_value()) << d.to_string();
  return std::get<spec::ArchitectureDoc>(*doc).full;
}

TEST(DeepseekSpec, ShippedSpecRoundTripsAndCountsThePublishedParameters) {
  const spec::Architecture a = shipped();
  const spec::MlaSpec& m = a.sections.get<spec::MlaSpec>();
  EXPECT_EQ(m.kv_lora_rank, 512);
  EXPECT_EQ(m.q_lora_rank, 1536);
  EXPECT_EQ(a.moe.scoring, spec::MoeScoring::kSigmoid);
  EXPECT_TRUE(a.moe.grouped_routing());
  EXPECT_EQ(a.position.rope_style, spec::RopeStyle::kGptj);
  // (128 + 64)^-1/2 x (0.1 ln 40 + 1)^2: YaRN's mscale_all_dim scales the softmax.
  EXPECT_NEAR(spec::mla_softmax_scale(a, m), std::pow(0.1 * std::log(40.0) + 1.0, 2) / std::sqrt(192.0), 1e-12);
  expect_round_trip(a);
  const spec::Workload w = test_workload(2, 1000);
  const spec::MemoryEstimate e = spec::memory_estimate(a, w, {1, 1, 1}, DeviceKind::kCuda);
  // DeepSeek-V3: 671B parameters (its model card; 685B with the 14B MTP module).
  EXPECT_NEAR(static_cast<double>(e.parameters), 671e9, 1.5e9);
  // 61 layers x 2 sequences x 1000 positions x (512 + 64) x 4 bytes: MLA's cache.
  EXPECT_EQ(e.kv_cache_bytes, 61LL * 2 * 1000 * 576 * 4);
  // Heads split over TP; the compressed KV and the experts need nothing more.
  EXPECT_TRUE(spec::layout_misfits(a, w, {8, 1, 1}).empty());
  const auto misfit = spec::layout_misfits(a, w, {3, 1, 1});
  ASSERT_FALSE(misfit.empty());
  EXPECT_NE(misfit[0].find("num_attention_heads (128)"), std::string::npos) << misfit[0];
}

TEST(DeepseekSpec, BadLatentAttentionAndRoutingFieldsAreErrorsAtTheirLine) {
  const std::string base = shipped_text();
  std::string e = load_errors(replaced(base, "num_key_value_heads: 128", "num_key_value_heads: 8"));
  EXPECT_NE(e.find("MLA has no key/value heads of its own"), std::string::npos) << e;
  EXPECT_NE(e.find("test.yaml:"), std::string::npos) << e;
  e = load_errors(replaced(base, "kv_lora_rank: 512, ", ""));
  EXPECT_NE(e.find("mla.kv_lora_rank"), std::string::npos) << e;
  e = load_errors(replaced(base, "attention: {causal: true}", "attention: {causal: true, qkv_bias: true}"));
  EXPECT_NE(e.find("attention.qkv_bias"), std::string::npos) << e;
  e = load_errors(replaced(base, "attention: {causal: true}", "attention: {causal: true, qk_norm: true}"));
  EXPECT_NE(e.find("attention.qk_norm"), std::string::npos) << e;
  e = load_errors(replaced(base, "  n_group: 8\n", "  n_group: 7\n"));
  EXPECT_NE(e.find("7 groups do not divide moe.num_experts (256)"), std::string::npos) << e;
  e = load_errors(replaced(base, "  topk_group: 4\n", "  topk_group: 9\n"));
  EXPECT_NE(e.find("moe.topk_group"), std::string::npos) << e;
  e = load_errors(replaced(base, "  topk_group: 4\n", "  topk_group: 0\n"));
  EXPECT_NE(e.find("moe.topk_group"), std::string::npos) << e;
  // 8 experts from one group of 32 is fine; 40 from one group is not.
  e = load_errors(replaced(replaced(base, "  topk_group: 4\n", "  topk_group: 1\n"), "experts_per_token: 8",
                           "experts_per_token: 40"));
  EXPECT_NE(e.find("more than the experts of the topk_group best groups (1 x 32)"), std::string::npos) << e;
  e = load_errors(replaced(base, "scoring: sigmoid", "scoring: tanh"));
  EXPECT_NE(e.find("moe.scoring"), std::string::npos) << e;
  // A preset changes sizes only: not the routing's kind.
  e = load_errors(replaced(base, "n_group: 8, topk_group: 4}", "n_group: 1, topk_group: 1}"));
  EXPECT_NE(e.find("changes the structure of the full model"), std::string::npos) << e;
}

// The published config (shared/reference/architectures.yaml) less its fp8 quantization.
Json deepseek_v3() {
  return Json::parse(R"({
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "attention_bias": false,
    "attention_dropout": 0.0, "aux_loss_alpha": 0.001, "bos_token_id": 0, "eos_token_id": 1, "ep_size": 1,
    "first_k_dense_replace": 3, "hidden_act": "silu", "hidden_size": 7168, "initializer_range": 0.02,
    "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840, "moe_intermediate_size": 2048,
    "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1, "norm_topk_prob": true,
    "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
    "num_nextn_predict_layers": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "rms_norm_eps": 1e-06, "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
    "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}, "rope_theta": 10000,
    "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "seq_aux": true, "tie_word_embeddings": false,
    "topk_group": 4, "topk_method": "noaux_tc", "torch_dtype": "bfloat16", "transformers_version": "4.33.1",
    "use_cache": true, "v_head_dim": 128, "vocab_size": 129280})");
}

std::string import_error(const Json& config) { return hf_import_error(config, "d/config.json"); }

TEST(HfImportDeepseek, PublishedConfigGivesTheShippedSpec) {
  const spec::HfImport imp = spec::hf_config_import(deepseek_v3(), "d/config.json");
  const spec::Architecture& a = imp.arch;
  const spec::Architecture want = shipped();
  EXPECT_EQ(a.family, "deepseek");
  expect_same_model(a, want);
}

TEST(HfImportDeepseek, WhatHfsModelWouldNotHonourIsRefusedNamingTheKey) {
  Json c = deepseek_v3();
  c["quantization_config"] = Json::parse(R"({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]})");
  EXPECT_NE(import_error(c).find("quantization_config"), std::string::npos);
  expect_hf_import_errors(deepseek_v3(),
                          {{"scoring_func", "softmax", "expected sigmoid"},
                           {"topk_method", "greedy", "expected noaux_tc"},
                           {"moe_layer_freq", 2, "expected 1"},
                           {"attention_bias", true, "attention_bias"},
                           {"head_dim", 128, "expected qk_rope_head_dim (64)"},
                           {"first_k_dense_replace", 61, "leaves no MoE layer"}},
                          "d/config.json");
  // q_lora_rank null: the query straight from the hidden state (DeepSeek-V2-Lite's form).
  Json lite = deepseek_v3();
  lite["q_lora_rank"] = nullptr;
  EXPECT_EQ(spec::hf_config_import(lite, "d/config.json").arch.sections.get<spec::MlaSpec>().q_lora_rank, 0);
  // rope_interleave false rotates halves.
  Json halves = deepseek_v3();
  halves["rope_interleave"] = false;
  EXPECT_EQ(spec::hf_config_import(halves, "d/config.json").arch.position.rope_style, spec::RopeStyle::kNeox);
}

// DeepSeek-V2's config, as DeepSeek-V2-Lite's layers with V2's grouped routing
// (DeepseekV2Config's keys; sizes cut down).
Json deepseek_v2() {
  return Json::parse(R"({
    "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
    "intermediate_size": 10944, "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16,
    "vocab_size": 102400, "max_position_embeddings": 163840, "rms_norm_eps": 1e-06, "hidden_act": "silu",
    "q_lora_rank": null, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6, "moe_intermediate_size": 1408,
    "first_k_dense_replace": 1, "norm_topk_prob": false, "routed_scaling_factor": 16.0,
    "topk_method": "group_limited_greedy", "n_group": 8, "topk_group": 3, "scoring_func": "softmax",
    "moe_layer_freq": 1, "aux_loss_alpha": 0.001, "seq_aux": true, "tie_word_embeddings": false,
    "rope_theta": 10000, "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707,
    "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096, "type": "yarn"},
    "torch_dtype": "bfloat16", "use_cache": true})");
}

TEST(HfImportDeepseek, V2RoutesBySoftmaxInLimitedGroupsWithoutRenormalising) {
  const spec::Architecture a = spec::hf_config_import(deepseek_v2(), "d/config.json").arch;
  EXPECT_EQ(a.family, "deepseek");
  const spec::MoeSpec& m = a.moe;
  EXPECT_EQ(m.scoring, spec::MoeScoring::kSoftmax);
  EXPECT_FALSE(m.score_correction_bias);
  EXPECT_FALSE(m.renormalize);
  EXPECT_EQ(m.n_group, 8);
  EXPECT_EQ(m.topk_group, 3);
  EXPECT_EQ(m.experts_per_token, 6);
  EXPECT_EQ(m.routed_scaling_factor, 16.0);
  EXPECT_EQ(m.shared_experts, 2);
  EXPECT_EQ(m.first_dense_layers, 1);
  EXPECT_EQ(a.sections.get<spec::MlaSpec>().q_lora_rank, 0);
  EXPECT_EQ(a.position.rope_style, spec::RopeStyle::kGptj);
  // The softmax scale as V3's: (128 + 64)^-1/2 x (0.1 x 0.707 ln 40 + 1)^2 (YaRN's
  // mscale_all_dim), as transformers 5.17's DeepseekV2Attention applies it.
  EXPECT_FALSE(a.attention.scale.has_value());
  EXPECT_NEAR(spec::mla_softmax_scale(a, a.sections.get<spec::MlaSpec>()),
              std::pow(0.1 * 0.707 * std::log(40.0) + 1.0, 2) / std::sqrt(192.0), 1e-12);
  // greedy: every expert competes (V2-Lite); the group keys are not read.
  Json greedy = deepseek_v2();
  greedy["topk_method"] = "greedy";
  greedy["n_group"] = 1;
  greedy["topk_group"] = 1;
  greedy["routed_scaling_factor"] = 1.0;
  const spec::MoeSpec g = spec::hf_config_import(greedy, "d/config.json").arch.moe;
  EXPECT_EQ(g.n_group, 1);
  EXPECT_FALSE(g.grouped_routing());  // softmax, one group, no bias, scale 1: plain top-k
  expect_hf_import_errors(deepseek_v2(),
                          {{"norm_topk_prob", true, "never renormalises"},
                           {"scoring_func", "sigmoid", "expected softmax"},
                           {"topk_method", "noaux_tc", "expected \"greedy\" or \"group_limited_greedy\""},
                           {"num_experts_per_tok", nullptr, "num_experts_per_tok"},
                           {"rope_interleave", false, "rope_interleave"}},
                          "d/config.json");
  Json no_groups = deepseek_v2();
  no_groups.erase("n_group");
  EXPECT_NE(import_error(no_groups).find("n_group"), std::string::npos) << import_error(no_groups);
}

}  // namespace
}  // namespace fk::testing
