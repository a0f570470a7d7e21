// fk import-hf's conversion (core/spec/hf_config.h): every transformers 5.17 fixture
// (tests/fixtures/hf/) imports, writes, loads back equal and validates, with values
// checked per model type; every transformers 4.x fixture (tests/fixtures/hf_v4/)
// imports to the same Architecture as the hand-written spec of that model.
#include "core/spec/hf_config.h"
#include "core/error.h"
#include "core/fs_util.h"
#include "core/spec/families/convnext.h"
#include "core/spec/families/vision.h"
#include "core/spec/json_io.h"
#include "core/spec/spec_file.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace fk::testing {
namespace {

namespace fs = std::filesystem;
using spec::Architecture;
using spec::LayerType;

const fs::path kSrc(FK_SOURCE_DIR);

std::vector<std::string> fixture_dirs(const std::string& sub) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(kSrc / "tests" / "fixtures" / sub))
    if (fs::exists(e.path() / "config.json")) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string v5(const std::string& model_type) {
  return (kSrc / "tests/fixtures/hf" / model_type / "config.json").string();
}
std::string v4(const std::string& name) { return (kSrc / "tests/fixtures/hf_v4" / name / "config.json").string(); }

// The architecture as flat JSON pointers -> values, without the notes that may differ
// (name, provenance, preset, checkpoint) and with layer_types resolved per layer (a
// pattern and its repetitions, or an empty list and its default, are the same model).
std::map<std::string, spec::Json> comparable(const Architecture& a) {
  spec::Json j = spec::to_json(a);
  for (const char* k : {"name", "source", "hf_id", "family", "preset", "checkpoint"}) j.erase(k);
  spec::Json types = spec::Json::array();
  for (int64_t l = 0; l < a.num_hidden_layers; ++l) types.push_back(spec::layer_type_name(a.layer_type(l)));
  j["attention"]["layer_types"] = types;
  if (!j["moe"].contains("dense_layers")) j["moe"]["dense_layers"] = spec::Json::array();
  std::map<std::string, spec::Json> flat;
  const spec::Json f = j.flatten();
  for (auto it = f.begin(); it != f.end(); ++it) flat[it.key()] = it.value();
  return flat;
}

// Field by field: every difference is reported with its JSON pointer.
void expect_same_model(const Architecture& got, const Architecture& want, const std::string& what) {
  const auto a = comparable(got), b = comparable(want);
  for (const auto& [k, v] : b) {
    auto it = a.find(k);
    if (it == a.end()) {
      ADD_FAILURE() << what << ": " << k << " missing in the import";
    } else {
      EXPECT_EQ(it->second, v) << what << ": " << k;
    }
  }
  for (const auto& [k, v] : a)
    if (!b.count(k)) ADD_FAILURE() << what << ": " << k << " only in the import";
}

// import -> YAML in a temp folder -> load: the loaded value equals the import (the
// checkpoint resolved to an absolute path).
Architecture write_and_load(const spec::HfImport& imported, const TempSpecs& tmp, const std::string& file_name) {
  const std::string path = tmp.write(file_name, spec::architecture_to_yaml(imported.arch, {"test"}));
  spec::Diagnostics diags;
  const auto any = spec::spec_load_file(path, diags);  // what fk validate does
  EXPECT_TRUE(any.has_value()) << diags.to_string() << spec::architecture_to_yaml(imported.arch);
  if (!any) return {};
  const auto& doc = std::get<spec::ArchitectureDoc>(*any);
  EXPECT_TRUE(doc.presets.empty());
  Architecture want = imported.arch;
  if (!want.checkpoint.empty())
    want.checkpoint = (fs::path(path).parent_path() / want.checkpoint).lexically_normal().string();
  EXPECT_EQ(spec::to_json(doc.full).dump(1), spec::to_json(want).dump(1)) << file_name;
  return doc.full;
}

TEST(HfImport5x, EveryFixtureImportsWritesLoadsAndValidates) {
  const auto types = fixture_dirs("hf");
  EXPECT_GE(types.size(), 11u);
  TempSpecs tmp;
  for (const auto& mt : types) {
    SCOPED_TRACE(mt);
    spec::HfImportOptions o;
    const std::string ckpt = spec::hf_checkpoint_beside(v5(mt));
    ASSERT_FALSE(ckpt.empty()) << "the 5.17 fixtures hold model.safetensors";
    o.checkpoint = fs::path(ckpt).lexically_relative(fs::absolute(tmp.root())).string();
    const spec::HfImport imp = spec::hf_config_import_file(v5(mt), o);
    EXPECT_EQ(imp.arch.name, mt) << "named after the config's folder";
    // A variant's folder (qwen3-yarn) is its model_type and what it varies.
    EXPECT_TRUE(imp.arch.model_type == mt || mt.rfind(imp.arch.model_type + "-", 0) == 0) << imp.arch.model_type;
    EXPECT_EQ(imp.arch.dtype, DType::kF32) << "dtype float32";
    EXPECT_EQ(imp.transformers_version, "5.17.0");
    EXPECT_NE(imp.arch.source.find(v5(mt)), std::string::npos) << imp.arch.source;
    EXPECT_EQ(imp.arch.hidden_size, 32);
    if (const auto* v = imp.arch.sections.find<spec::VisionSpec>()) {
      // The vision fixtures: 14 px images at patch 4, no vocabulary; a token a patch,
      // and the class token where the model has one.
      EXPECT_EQ(imp.arch.vocab_size, 0);
      EXPECT_EQ(v->patches(), 9);
      EXPECT_EQ(imp.arch.max_position_embeddings, v->tokens());
      EXPECT_EQ(v->class_token, mt != "siglip_vision_model");
    } else if (const auto* c = imp.arch.sections.find<spec::ConvNextSpec>()) {
      // The ConvNeXt fixtures: 22 px at patch 2, four stages of 11, 5, 2 and 1 pixels a
      // side; no vocabulary.
      EXPECT_EQ(imp.arch.vocab_size, 0);
      EXPECT_EQ(c->stages(), 4);
      EXPECT_EQ(c->side(3), 1);
      EXPECT_EQ(c->v2(), mt == "convnextv2");
    } else {
      EXPECT_EQ(imp.arch.vocab_size, 131);
    }
    if (imp.arch.model_family == "transformer" && !imp.arch.sections.has(spec::VisionSpec::kKey)) {
      // qwen3-yarn's context is not its YaRN factor times the original (4 x 32): the
      // parity then shows which of the two HF scales by.
      EXPECT_EQ(imp.arch.max_position_embeddings, mt == "qwen3-yarn" ? 256 : 64);
    }
    const Architecture loaded = write_and_load(imp, tmp, mt + ".yaml");
    EXPECT_EQ(loaded.checkpoint, fs::path(ckpt).lexically_normal().string());
  }
}

spec::HfImport import5(const std::string& mt) { return spec::hf_config_import_file(v5(mt)); }

std::vector<LayerType> per_layer(const Architecture& a) {
  std::vector<LayerType> out;
  for (int64_t l = 0; l < a.num_hidden_layers; ++l) out.push_back(a.layer_type(l));
  return out;
}

constexpr LayerType F = LayerType::kFull;
constexpr LayerType S = LayerType::kSliding;

TEST(HfImport5x, LlamaRopeParametersLlama3) {
  const Architecture a = import5("llama").arch;
  EXPECT_EQ(a.num_attention_heads, 4);
  EXPECT_EQ(a.num_key_value_heads, 2);
  EXPECT_EQ(a.head_dim, 8);  // != hidden / heads
  EXPECT_DOUBLE_EQ(a.norm.eps, 1e-5);
  EXPECT_DOUBLE_EQ(a.position.rope_theta, 500000.0);
  EXPECT_EQ(a.position.rope_scaling.type, spec::RopeScalingType::kLlama3);
  EXPECT_DOUBLE_EQ(a.position.rope_scaling.factor, 8.0);
  EXPECT_DOUBLE_EQ(a.position.rope_scaling.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(a.position.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(a.position.rope_scaling.original_max_position_embeddings, 16);
  EXPECT_FALSE(a.attention.qkv_bias || a.attention.out_bias || a.mlp.bias);
  EXPECT_FALSE(a.embedding.tied);
  EXPECT_EQ(per_layer(a), std::vector<LayerType>(2, F));
  EXPECT_EQ(a.family, "llama");
}

TEST(HfImport5x, MistralSlidesEveryLayer) {
  const Architecture a = import5("mistral").arch;
  EXPECT_EQ(a.attention.sliding_window, 5);
  EXPECT_EQ(per_layer(a), std::vector<LayerType>(2, S));
  EXPECT_FALSE(a.position.local_rope_theta.has_value());
}

TEST(HfImport5x, Qwen2BiasOnQkvOnlyAndTied) {
  const Architecture a = import5("qwen2").arch;
  EXPECT_TRUE(a.attention.qkv_bias);
  EXPECT_FALSE(a.attention.out_bias);
  EXPECT_TRUE(a.embedding.tied);
  EXPECT_FALSE(a.attention.sliding_window.has_value()) << "use_sliding_window false";
  EXPECT_EQ(a.head_dim, 8);
}

TEST(HfImport5x, Qwen3QkNorm) {
  const Architecture a = import5("qwen3").arch;
  EXPECT_TRUE(a.attention.qk_norm);
  EXPECT_EQ(a.head_dim, 16);
  EXPECT_FALSE(a.attention.qkv_bias);
}

TEST(HfImport5x, Qwen3MoeDenseLayersFromMlpOnlyLayers) {
  const Architecture a = import5("qwen3_moe").arch;
  EXPECT_EQ(a.moe.num_experts, 4);  // num_local_experts in 5.x
  EXPECT_EQ(a.moe.experts_per_token, 2);
  EXPECT_EQ(a.moe.moe_intermediate_size, 24);
  EXPECT_TRUE(a.moe.renormalize);  // norm_topk_prob
  EXPECT_EQ(a.moe.dense_layers, std::vector<int64_t>{1});
  EXPECT_EQ(a.moe.first_dense_layers, 0);
  EXPECT_TRUE(a.layer_is_moe(0));
  EXPECT_FALSE(a.layer_is_moe(1));
  EXPECT_TRUE(a.layer_is_moe(2));
  EXPECT_EQ(a.intermediate_size, 64) << "width of the dense layer";
  EXPECT_TRUE(a.attention.qk_norm);
}

TEST(HfImport5x, MixtralExperts) {
  const Architecture a = import5("mixtral").arch;
  EXPECT_EQ(a.moe.num_experts, 4);
  EXPECT_EQ(a.moe.experts_per_token, 2);
  EXPECT_EQ(a.moe.moe_intermediate_size, 64);
  EXPECT_TRUE(a.moe.renormalize);
  EXPECT_TRUE(a.moe.dense_layers.empty());
  EXPECT_FALSE(a.attention.sliding_window.has_value());
  EXPECT_EQ(a.family, "mistral");
}

TEST(HfImport5x, Gemma2) {
  const Architecture a = import5("gemma2").arch;
  EXPECT_EQ(a.attention.layer_types, (std::vector<LayerType>{S, F}));
  EXPECT_EQ(a.attention.sliding_window, 5);
  EXPECT_EQ(a.attention.logit_softcap, 50.0);
  EXPECT_EQ(a.head.logit_softcap, 30.0);
  EXPECT_EQ(a.attention.query_pre_attn_scalar, 12.0);
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kSandwich);
  EXPECT_DOUBLE_EQ(a.norm.weight_offset, 1.0);
  EXPECT_TRUE(a.embedding.scale_by_sqrt_hidden);
  EXPECT_TRUE(a.embedding.tied);
  EXPECT_EQ(a.mlp.activation, spec::Activation::kGeluTanh);
  EXPECT_FALSE(a.attention.qk_norm);
  EXPECT_FALSE(a.position.local_rope_theta.has_value()) << "one rope for every layer";
  EXPECT_EQ(a.head_dim, 16);
}

TEST(HfImport5x, Gemma3KeyedRopeParameters) {
  const Architecture a = import5("gemma3_text").arch;
  EXPECT_EQ(a.attention.layer_types, (std::vector<LayerType>{S, S, S, S, S, F}));
  EXPECT_EQ(a.attention.sliding_window, 5);
  EXPECT_DOUBLE_EQ(a.position.rope_theta, 1e6);
  EXPECT_EQ(a.position.local_rope_theta, 10000.0);
  EXPECT_EQ(a.position.rope_scaling.type, spec::RopeScalingType::kLinear);
  EXPECT_DOUBLE_EQ(a.position.rope_scaling.factor, 8.0);
  EXPECT_TRUE(a.attention.qk_norm);
  EXPECT_FALSE(a.attention.logit_softcap.has_value());
  EXPECT_FALSE(a.head.logit_softcap.has_value());
  EXPECT_EQ(a.attention.query_pre_attn_scalar, 16.0);
  EXPECT_EQ(a.family, "gemma3");
}

TEST(HfImport5x, Phi3) {
  const Architecture a = import5("phi3").arch;
  EXPECT_DOUBLE_EQ(a.position.partial_rotary_factor, 1.0);
  EXPECT_EQ(a.head_dim, 8);
  EXPECT_EQ(a.num_key_value_heads, 2);
  EXPECT_FALSE(a.attention.sliding_window.has_value());
  EXPECT_TRUE(a.mlp.gated) << "gate_up_proj is fused in the checkpoint only";
}

TEST(HfImport5x, BertEncoder) {
  const Architecture a = import5("bert").arch;
  EXPECT_FALSE(a.attention.causal);
  EXPECT_TRUE(a.attention.qkv_bias && a.attention.out_bias);
  EXPECT_EQ(a.norm.kind, spec::NormKind::kLayerNorm);
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kPost);
  EXPECT_DOUBLE_EQ(a.norm.eps, 1e-12);
  EXPECT_EQ(a.mlp.activation, spec::Activation::kGelu);
  EXPECT_FALSE(a.mlp.gated);
  EXPECT_TRUE(a.mlp.bias);
  EXPECT_EQ(a.position.kind, spec::PositionKind::kLearned);
  EXPECT_EQ(a.embedding.type_vocab_size, 2);
  EXPECT_TRUE(a.embedding.norm);
  EXPECT_FALSE(a.embedding.tied) << "BertModel has no LM head, whatever tie_word_embeddings says";
  EXPECT_EQ(a.head.kind, spec::HeadKind::kNone);
  EXPECT_FALSE(a.head.final_norm);
  EXPECT_EQ(a.num_key_value_heads, 4);
  EXPECT_EQ(a.head_dim, 8);
}

TEST(HfImport5x, Gpt2InnerDefaultsToFourTimesHidden) {
  const spec::HfImport imp = import5("gpt2");
  const Architecture& a = imp.arch;
  EXPECT_EQ(a.intermediate_size, 128);
  EXPECT_EQ(a.num_hidden_layers, 2);
  EXPECT_EQ(a.num_attention_heads, 4);
  EXPECT_EQ(a.mlp.activation, spec::Activation::kGeluTanh);
  EXPECT_FALSE(a.mlp.gated);
  EXPECT_TRUE(a.embedding.tied);
  EXPECT_EQ(a.position.kind, spec::PositionKind::kLearned);
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kPre);
  EXPECT_TRUE(a.head.final_norm);
  const bool noted = std::any_of(imp.defaults_used.begin(), imp.defaults_used.end(),
                                 [](const std::string& d) { return d.rfind("n_inner=", 0) == 0; });
  EXPECT_TRUE(noted) << "the n_inner default is named in the source";
  EXPECT_NE(a.source.find("n_inner=4 x n_embd (128)"), std::string::npos) << a.source;
}

// The message of importing `c`, "" when it imports.
std::string import_error(const nlohmann::json& c) {
  try {
    spec::hf_config_import(c, "config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Granite's muP multipliers, each onto its own spec field (the values are a test's, not
// a published model's).
TEST(HfImportGranite, MultipliersMapToTheirFieldsAndOnesStayUnset) {
  nlohmann::json c = {{"model_type", "granite"},
                      {"hidden_size", 64},
                      {"num_hidden_layers", 2},
                      {"num_attention_heads", 4},
                      {"num_key_value_heads", 2},
                      {"intermediate_size", 128},
                      {"vocab_size", 300},
                      {"embedding_multiplier", 12.0},
                      {"attention_multiplier", 0.015625},
                      {"residual_multiplier", 0.22},
                      {"logits_scaling", 8.0},
                      {"tie_word_embeddings", true},
                      {"rope_theta", 10000.0},
                      {"attention_bias", false},
                      {"mlp_bias", false}};
  const spec::HfImport imp = spec::hf_config_import(c, "granite/config.json");
  const Architecture& a = imp.arch;
  EXPECT_EQ(a.model_family, "transformer");
  EXPECT_EQ(a.head_dim, 16);
  EXPECT_EQ(a.embedding.multiplier, 12.0);
  EXPECT_EQ(a.attention.scale, 0.015625);
  EXPECT_EQ(a.attention_scale(), 0.015625) << "the multiplier is the softmax scale itself";
  EXPECT_EQ(a.norm.residual_multiplier, 0.22);
  EXPECT_EQ(a.head.logit_scale, 0.125);
  EXPECT_TRUE(a.embedding.tied);
  TempSpecs tmp;
  const Architecture back = write_and_load(imp, tmp, "granite.yaml");
  EXPECT_EQ(back.norm.residual_multiplier, 0.22);
  EXPECT_EQ(spec::architecture_from_json(spec::to_json(a), "/a"), a);

  // GraniteConfig's defaults: every multiplier 1.0, so the scale is 1.0, not 1/sqrt(16).
  for (const char* k : {"embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling"})
    c.erase(k);
  const Architecture d = spec::hf_config_import(c, "granite/config.json").arch;
  EXPECT_EQ(d.attention_scale(), 1.0);
  EXPECT_FALSE(d.embedding.multiplier.has_value());
  EXPECT_FALSE(d.norm.residual_multiplier.has_value());
  EXPECT_FALSE(d.head.logit_scale.has_value());
  EXPECT_FALSE(spec::to_json(d)["norm"].contains("residual_multiplier")) << "unset fields stay out of job files";

  c["residual_multiplier"] = 0;
  EXPECT_NE(import_error(c).find("residual_multiplier"), std::string::npos)
      << "a residual_multiplier of 0 was imported: " << import_error(c);
}

// Cohere (Command R): one bias-free LayerNorm feeding attention and MLP, interleaved
// rope, logits x logit_scale; the rope theta default follows the writing version.
TEST(HfImportCohere, ParallelSharedBiasFreeLayerNormAndLogitScale) {
  nlohmann::json c = {{"model_type", "cohere"},   {"hidden_size", 64},        {"num_hidden_layers", 2},
                      {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"intermediate_size", 128},
                      {"vocab_size", 300},        {"logit_scale", 0.25},      {"transformers_version", "5.17.0"}};
  const spec::HfImport imp = spec::hf_config_import(c, "cohere/config.json");
  const Architecture& a = imp.arch;
  EXPECT_EQ(a.norm.kind, spec::NormKind::kLayerNorm);
  EXPECT_FALSE(a.norm.bias);
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kParallelShared);
  EXPECT_EQ(a.norm.eps, 1e-5);
  EXPECT_TRUE(a.mlp.gated);
  EXPECT_EQ(a.position.rope_style, spec::RopeStyle::kGptj);
  EXPECT_EQ(a.position.rope_theta, 500000.0) << "transformers 5's default_theta";
  EXPECT_EQ(a.head.logit_scale, 0.25);
  EXPECT_TRUE(a.embedding.tied) << "CohereConfig ties by default";
  EXPECT_FALSE(a.attention.qkv_bias);
  TempSpecs tmp;
  const Architecture back = write_and_load(imp, tmp, "cohere.yaml");
  EXPECT_FALSE(back.norm.bias);
  EXPECT_EQ(spec::to_json(a)["norm"]["bias"], false);

  c["transformers_version"] = "4.44.0";
  c.erase("logit_scale");
  const Architecture old = spec::hf_config_import(c, "cohere/config.json").arch;
  EXPECT_EQ(old.position.rope_theta, 10000.0) << "4.x CohereConfig's rope_theta";
  EXPECT_EQ(old.head.logit_scale, 0.0625) << "CohereConfig's logit_scale";

  // Command R+: each q and k head its own LayerNorm weights.
  c["use_qk_norm"] = true;
  const spec::HfImport plus = spec::hf_config_import(c, "cohere/config.json");
  EXPECT_TRUE(plus.arch.attention.qk_norm);
  EXPECT_TRUE(plus.arch.attention.qk_norm_per_head);
  EXPECT_FALSE(plus.arch.attention.qk_norm_full);
  EXPECT_TRUE(write_and_load(plus, tmp, "command-r-plus.yaml").attention.qk_norm_per_head);
  EXPECT_EQ(spec::architecture_from_json(spec::to_json(plus.arch), "/a"), plus.arch);
}

// Qwen2-MoE: Qwen's sparse layers with one sigmoid-gated shared expert; absent keys take
// Qwen2MoeConfig's defaults.
TEST(HfImportQwen2Moe, GatedSharedExpertAndClassDefaults) {
  nlohmann::json c = {{"model_type", "qwen2_moe"},
                      {"hidden_size", 64},
                      {"num_hidden_layers", 4},
                      {"num_attention_heads", 4},
                      {"num_key_value_heads", 2},
                      {"intermediate_size", 128},
                      {"vocab_size", 300},
                      {"num_experts", 8},
                      {"num_experts_per_tok", 2},
                      {"moe_intermediate_size", 32},
                      {"shared_expert_intermediate_size", 96},
                      {"decoder_sparse_step", 2},
                      {"norm_topk_prob", false}};
  const spec::HfImport imp = spec::hf_config_import(c, "qwen2_moe/config.json");
  const Architecture& a = imp.arch;
  EXPECT_TRUE(a.attention.qkv_bias);
  EXPECT_FALSE(a.attention.out_bias);
  EXPECT_EQ(a.moe.num_experts, 8);
  EXPECT_EQ(a.moe.experts_per_token, 2);
  EXPECT_EQ(a.moe.moe_intermediate_size, 32);
  EXPECT_FALSE(a.moe.renormalize);
  EXPECT_EQ(a.moe.shared_experts, 1);
  EXPECT_EQ(a.moe.shared_intermediate_size, 96);
  EXPECT_TRUE(a.moe.shared_expert_gate);
  EXPECT_EQ(a.moe.dense_layers, (std::vector<int64_t>{0, 2})) << "(layer + 1) % decoder_sparse_step != 0 is dense";
  TempSpecs tmp;
  EXPECT_TRUE(write_and_load(imp, tmp, "qwen2-moe.yaml").moe.shared_expert_gate);
  for (const char* k :
       {"num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size"})
    c.erase(k);
  c["intermediate_size"] = 5632;
  const Architecture d = spec::hf_config_import(c, "qwen2_moe/config.json").arch;
  EXPECT_EQ(d.moe.num_experts, 60);
  EXPECT_EQ(d.moe.experts_per_token, 4);
  EXPECT_EQ(d.moe.moe_intermediate_size, 1408);
  EXPECT_EQ(d.moe.shared_intermediate_size, 5632);
  c["use_sliding_window"] = true;
  EXPECT_NE(import_error(c).find("use_sliding_window"), std::string::npos)
      << "a sliding Qwen2-MoE was imported: " << import_error(c);
}

// gpt-oss: sinks, biases everywhere, alternating windows from layer 0, YaRN rope not
// truncated and the clamped SwiGLU experts; absent keys take GptOssConfig's defaults.
TEST(HfImportGptOss, SinksBiasedExpertsAndClassDefaults) {
  nlohmann::json c = {{"model_type", "gpt_oss"},  {"hidden_size", 64},        {"num_hidden_layers", 4},
                      {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"head_dim", 16},
                      {"intermediate_size", 96},  {"vocab_size", 300},        {"num_local_experts", 8},
                      {"num_experts_per_tok", 2}, {"sliding_window", 16},     {"swiglu_limit", 5.5}};
  const spec::HfImport imp = spec::hf_config_import(c, "gpt_oss/config.json");
  const Architecture& a = imp.arch;
  EXPECT_TRUE(a.attention.sinks);
  EXPECT_TRUE(a.attention.qkv_bias);
  EXPECT_TRUE(a.attention.out_bias);
  EXPECT_EQ(a.attention.sliding_window, 16);
  EXPECT_EQ(a.layer_type(0), LayerType::kSliding);
  EXPECT_EQ(a.layer_type(1), LayerType::kFull);
  EXPECT_EQ(a.layer_type(2), LayerType::kSliding);
  EXPECT_EQ(a.position.rope_theta, 150000.0);
  EXPECT_EQ(a.position.rope_scaling.type, spec::RopeScalingType::kYarn) << "GptOssConfig's default rope is YaRN";
  EXPECT_EQ(a.position.rope_scaling.factor, 32.0);
  EXPECT_EQ(a.position.rope_scaling.original_max_position_embeddings, 4096);
  EXPECT_FALSE(a.position.rope_scaling.truncate);
  EXPECT_EQ(a.moe.num_experts, 8);
  EXPECT_EQ(a.moe.experts_per_token, 2);
  EXPECT_EQ(a.moe.moe_intermediate_size, 96);
  EXPECT_TRUE(a.moe.renormalize);
  EXPECT_TRUE(a.moe.router_bias);
  EXPECT_TRUE(a.moe.expert_bias);
  EXPECT_EQ(a.moe.swiglu_limit, 5.5);
  EXPECT_DOUBLE_EQ(a.moe.swiglu_alpha, 1.702);
  TempSpecs tmp;
  const Architecture back = write_and_load(imp, tmp, "gpt-oss.yaml");
  EXPECT_TRUE(back.attention.sinks);
  EXPECT_TRUE(back.moe.router_bias && back.moe.expert_bias);
  EXPECT_EQ(back.moe.swiglu_limit, 5.5);
  EXPECT_DOUBLE_EQ(back.moe.swiglu_alpha, 1.702);
  EXPECT_FALSE(back.position.rope_scaling.truncate);
  // A layer pattern that starts full is kept, and another activation is refused.
  c["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "sliding_attention"};
  EXPECT_EQ(spec::hf_config_import(c, "gpt_oss/config.json").arch.layer_type(0), LayerType::kFull);
  c["hidden_act"] = "gelu";
  EXPECT_NE(import_error(c).find("hidden_act"), std::string::npos) << import_error(c);
}

// OLMo 2: the norms on the branch outputs, q / k normalised over all heads at once.
TEST(HfImportOlmo2, PostBranchNormsAndFullWidthQkNorm) {
  nlohmann::json c = {{"model_type", "olmo2"},    {"hidden_size", 64},        {"num_hidden_layers", 2},
                      {"num_attention_heads", 4}, {"intermediate_size", 128}, {"vocab_size", 300},
                      {"rms_norm_eps", 1e-6},     {"rope_theta", 500000.0}};
  const spec::HfImport imp = spec::hf_config_import(c, "olmo2/config.json");
  const Architecture& a = imp.arch;
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kPostBranch);
  EXPECT_EQ(a.norm.kind, spec::NormKind::kRmsNorm);
  EXPECT_TRUE(a.attention.qk_norm);
  EXPECT_TRUE(a.attention.qk_norm_full);
  EXPECT_EQ(a.num_key_value_heads, 4) << "Olmo2Config: kv heads default to the heads";
  EXPECT_FALSE(a.attention.qkv_bias);
  TempSpecs tmp;
  const Architecture back = write_and_load(imp, tmp, "olmo2.yaml");
  EXPECT_TRUE(back.attention.qk_norm_full);
  c["clip_qkv"] = 8.0;
  EXPECT_NE(import_error(c).find("clip_qkv"), std::string::npos) << "clip_qkv was imported: " << import_error(c);
}

// StableLM: LayerNorm with bias, partial rope (default 0.25), optional parallel layer.
TEST(HfImportStableLm, LayerNormPartialRopeAndParallelResidual) {
  nlohmann::json c = {{"model_type", "stablelm"}, {"hidden_size", 64},        {"num_hidden_layers", 2},
                      {"num_attention_heads", 4}, {"num_key_value_heads", 4}, {"intermediate_size", 128},
                      {"vocab_size", 300},        {"use_qkv_bias", true}};
  const Architecture a = spec::hf_config_import(c, "stablelm/config.json").arch;
  EXPECT_EQ(a.norm.kind, spec::NormKind::kLayerNorm);
  EXPECT_TRUE(a.norm.bias);
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kPre);
  EXPECT_EQ(a.position.partial_rotary_factor, 0.25);
  EXPECT_EQ(a.rotary_dim(), 4);
  EXPECT_TRUE(a.attention.qkv_bias);
  EXPECT_FALSE(a.attention.out_bias);
  EXPECT_TRUE(a.mlp.gated);
  c["use_parallel_residual"] = true;
  EXPECT_EQ(spec::hf_config_import(c, "stablelm/config.json").arch.norm.placement,
            spec::NormPlacement::kParallelShared);
  // qk_layernorm: each q and k head its own LayerNorm weight, no bias (the model's other
  // LayerNorms keep theirs); the spec says so through write and load and the job JSON.
  c["qk_layernorm"] = true;
  const spec::HfImport qk = spec::hf_config_import(c, "stablelm/config.json");
  EXPECT_TRUE(qk.arch.attention.qk_norm);
  EXPECT_TRUE(qk.arch.attention.qk_norm_per_head);
  EXPECT_EQ(qk.arch.attention.qk_norm_bias, false);
  EXPECT_FALSE(qk.arch.qk_norm_has_bias());
  EXPECT_TRUE(qk.arch.norm.bias);
  TempSpecs tmp;
  EXPECT_EQ(write_and_load(qk, tmp, "stablelm-qk.yaml").attention.qk_norm_bias, false);
  EXPECT_EQ(spec::architecture_from_json(spec::to_json(qk.arch), "/a"), qk.arch);
}

// GPT-BigCode: GPT-2's keys; multi_query (the default) gives one kv head.
TEST(HfImportGptBigCode, MultiQueryByDefault) {
  nlohmann::json c = {{"model_type", "gpt_bigcode"}, {"n_embd", 64}, {"n_layer", 2}, {"n_head", 4},
                      {"vocab_size", 300},           {"n_positions", 128}};
  const Architecture a = spec::hf_config_import(c, "gpt_bigcode/config.json").arch;
  EXPECT_EQ(a.num_key_value_heads, 1);
  EXPECT_EQ(a.attention_kind(), "MQA");
  EXPECT_EQ(a.head_dim, 16);
  EXPECT_EQ(a.intermediate_size, 256) << "n_inner null: 4 x n_embd";
  EXPECT_EQ(a.mlp.activation, spec::Activation::kGeluTanh) << "gelu_pytorch_tanh";
  EXPECT_EQ(a.position.kind, spec::PositionKind::kLearned);
  EXPECT_TRUE(a.embedding.tied);
  c["multi_query"] = false;
  EXPECT_EQ(spec::hf_config_import(c, "gpt_bigcode/config.json").arch.num_key_value_heads, 4);
  c["scale_attn_weights"] = false;
  EXPECT_NE(import_error(c).find("scale_attn_weights"), std::string::npos) << import_error(c);
}

// A small decoder config of `model_type` (64 wide, 4 heads, 2 layers) plus `extra`.
nlohmann::json small_decoder(const std::string& model_type, const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json c = {{"model_type", model_type}, {"hidden_size", 64},        {"num_hidden_layers", 2},
                      {"num_attention_heads", 4}, {"intermediate_size", 128}, {"vocab_size", 300}};
  c.update(extra);
  return c;
}

// OLMo: LayerNorm without weight or bias (eps fixed at 1e-5), written and read back.
TEST(HfImportOlmo, NonParametricLayerNorm) {
  nlohmann::json c = small_decoder("olmo", {{"attention_bias", true}});
  const spec::HfImport imp = spec::hf_config_import(c, "olmo/config.json");
  const Architecture& a = imp.arch;
  EXPECT_EQ(a.norm.kind, spec::NormKind::kLayerNorm);
  EXPECT_FALSE(a.norm.weight);
  EXPECT_FALSE(a.norm.bias);
  EXPECT_EQ(a.norm.eps, 1e-5);
  EXPECT_TRUE(a.attention.qkv_bias);
  EXPECT_TRUE(a.attention.out_bias);
  TempSpecs tmp;
  const Architecture back = write_and_load(imp, tmp, "olmo.yaml");
  EXPECT_FALSE(back.norm.weight);
  EXPECT_EQ(back, a);
  c["clip_qkv"] = 8.0;
  EXPECT_NE(import_error(c).find("clip_qkv"), std::string::npos) << import_error(c);
  c.erase("clip_qkv");
  c["layer_norm_eps"] = 1e-6;  // not OlmoConfig's: refused, not silently read
  EXPECT_NE(import_error(c).find("layer_norm_eps"), std::string::npos) << import_error(c);
}

// OLMoE: full-width q/k norms, softmax-then-top-k routing without renormalising by default.
TEST(HfImportOlmoe, FullWidthQkNormAndUnnormalisedTopK) {
  nlohmann::json c = small_decoder("olmoe", {{"num_experts", 8}, {"num_experts_per_tok", 2}});
  const Architecture a = spec::hf_config_import(c, "olmoe/config.json").arch;
  EXPECT_TRUE(a.attention.qk_norm_full);
  EXPECT_EQ(a.moe.num_experts, 8);
  EXPECT_EQ(a.moe.experts_per_token, 2);
  EXPECT_EQ(a.moe.moe_intermediate_size, 128);
  EXPECT_FALSE(a.moe.renormalize);
  EXPECT_EQ(a.norm.eps, 1e-5);
  c["norm_topk_prob"] = true;
  EXPECT_TRUE(spec::hf_config_import(c, "olmoe/config.json").arch.moe.renormalize);
  c["head_dim"] = 32;  // q norm is hidden_size wide in HF: heads x head_dim must be hidden
  EXPECT_NE(import_error(c).find("head_dim"), std::string::npos) << import_error(c);
}

// Helium: rope over the whole head with adjacent pairs, default theta 1e5; o_proj unbiased.
TEST(HfImportHelium, GptjRopeAndQkvOnlyBias) {
  nlohmann::json c = small_decoder("helium", {{"head_dim", 16}, {"num_key_value_heads", 2}, {"attention_bias", true}});
  const Architecture a = spec::hf_config_import(c, "helium/config.json").arch;
  EXPECT_EQ(a.position.rope_style, spec::RopeStyle::kGptj);
  EXPECT_EQ(a.position.partial_rotary_factor, 1.0);
  EXPECT_EQ(a.position.rope_theta, 100000.0);
  EXPECT_TRUE(a.attention.qkv_bias);
  EXPECT_FALSE(a.attention.out_bias);
  EXPECT_EQ(a.norm.eps, 1e-8);
  c["head_dim"] = 32;
  EXPECT_NE(import_error(c).find("head_dim"), std::string::npos) << import_error(c);
}

// Seed-OSS: q/k/v bias on by default, o and MLP biases by their own switches.
TEST(HfImportSeedOss, SeparateBiasSwitches) {
  nlohmann::json c = small_decoder("seed_oss", {{"num_key_value_heads", 2}});
  Architecture a = spec::hf_config_import(c, "seed_oss/config.json").arch;
  EXPECT_EQ(a.head_dim, 128) << "SeedOssConfig's default head_dim, not hidden / heads";
  EXPECT_TRUE(a.attention.qkv_bias);
  EXPECT_FALSE(a.attention.out_bias);
  EXPECT_FALSE(a.mlp.bias);
  c["attention_out_bias"] = true;
  c["mlp_bias"] = true;
  a = spec::hf_config_import(c, "seed_oss/config.json").arch;
  EXPECT_TRUE(a.attention.out_bias);
  EXPECT_TRUE(a.mlp.bias);
}

// GLM: half of each head rotated with adjacent pairs; GLM-4 adds the branch-output norms.
TEST(HfImportGlm, PartialGptjRopeAndGlm4Sandwich) {
  nlohmann::json c = small_decoder("glm", {{"head_dim", 16}, {"num_key_value_heads", 2}});
  const Architecture a = spec::hf_config_import(c, "glm/config.json").arch;
  EXPECT_EQ(a.position.rope_style, spec::RopeStyle::kGptj);
  EXPECT_EQ(a.position.partial_rotary_factor, 0.5);
  EXPECT_EQ(a.rotary_dim(), 8);
  EXPECT_TRUE(a.attention.qkv_bias);
  EXPECT_FALSE(a.attention.out_bias);
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kPre);
  c["model_type"] = "glm4";
  c["partial_rotary_factor"] = 0.25;
  const Architecture g4 = spec::hf_config_import(c, "glm4/config.json").arch;
  EXPECT_EQ(g4.norm.placement, spec::NormPlacement::kSandwich);
  EXPECT_EQ(g4.norm.weight_offset, 0.0) << "GLM-4's RMSNorm scales by w, not 1 + w";
  EXPECT_EQ(g4.rotary_dim(), 4);
}

// GraniteMoe: Granite's scales over top-k-then-softmax experts; the shared variant adds an
// ungated shared expert only when shared_intermediate_size > 0.
TEST(HfImportGraniteMoe, ScalesExpertsAndSharedExpert) {
  nlohmann::json c = small_decoder(
      "granitemoe",
      {{"num_local_experts", 4}, {"num_experts_per_tok", 2}, {"attention_multiplier", 0.25}, {"logits_scaling", 2.0}});
  const Architecture a = spec::hf_config_import(c, "granitemoe/config.json").arch;
  EXPECT_EQ(a.moe.num_experts, 4);
  EXPECT_TRUE(a.moe.renormalize) << "a softmax over the top-k logits";
  EXPECT_EQ(a.moe.moe_intermediate_size, 128);
  EXPECT_EQ(a.attention.scale, 0.25);
  EXPECT_EQ(a.head.logit_scale, 0.5);
  EXPECT_EQ(a.moe.shared_experts, 0);
  c["model_type"] = "granitemoeshared";
  EXPECT_EQ(spec::hf_config_import(c, "gms/config.json").arch.moe.shared_experts, 0) << "shared size 0: none";
  c["shared_intermediate_size"] = 96;
  const Architecture s = spec::hf_config_import(c, "gms/config.json").arch;
  EXPECT_EQ(s.moe.shared_experts, 1);
  EXPECT_EQ(s.moe.shared_intermediate_size, 96);
  EXPECT_FALSE(s.moe.shared_expert_gate);
}

// Falcon's three layer forms and kv layouts, and the combinations HF itself cannot run.
TEST(HfImportFalcon, LayerFormsAndKvHeads) {
  nlohmann::json c = {{"model_type", "falcon"},
                      {"hidden_size", 64},
                      {"num_hidden_layers", 2},
                      {"num_attention_heads", 8},
                      {"vocab_size", 300}};
  Architecture a = spec::hf_config_import(c, "falcon/config.json").arch;  // Falcon-7B's form
  EXPECT_EQ(a.num_key_value_heads, 1) << "multi_query by default";
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kParallelShared);
  EXPECT_EQ(a.norm.kind, spec::NormKind::kLayerNorm);
  EXPECT_EQ(a.intermediate_size, 256);
  EXPECT_EQ(a.mlp.activation, spec::Activation::kGelu);
  EXPECT_FALSE(a.mlp.gated);
  EXPECT_FALSE(a.attention.qkv_bias);
  EXPECT_TRUE(a.embedding.tied);
  c["new_decoder_architecture"] = true;  // Falcon-40B's
  c["num_kv_heads"] = 2;
  c["bias"] = true;
  a = spec::hf_config_import(c, "falcon/config.json").arch;
  EXPECT_EQ(a.num_key_value_heads, 2);
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kParallel) << "ln_attn and ln_mlp";
  EXPECT_TRUE(a.attention.qkv_bias);
  EXPECT_TRUE(a.mlp.bias);
  c["num_ln_in_parallel_attn"] = 1;  // Falcon 2's
  EXPECT_EQ(spec::hf_config_import(c, "falcon/config.json").arch.norm.placement, spec::NormPlacement::kParallelShared);
  c["parallel_attn"] = false;
  EXPECT_NE(import_error(c).find("parallel_attn"), std::string::npos) << import_error(c);
  c.erase("num_ln_in_parallel_attn");
  c["new_decoder_architecture"] = false;
  c["multi_query"] = false;
  c["num_kv_heads"] = 8;
  a = spec::hf_config_import(c, "falcon/config.json").arch;
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kPre) << "sequential: input and post-attention norms";
  EXPECT_EQ(a.num_key_value_heads, 8);
  c["num_kv_heads"] = 2;
  EXPECT_NE(import_error(c).find("num_kv_heads"), std::string::npos) << import_error(c);
  c["num_kv_heads"] = 8;
  c["alibi"] = true;
  EXPECT_NE(import_error(c).find("alibi"), std::string::npos) << import_error(c);
  c.erase("alibi");
  c["n_head"] = 8;
  EXPECT_NE(import_error(c).find("n_head"), std::string::npos) << import_error(c);
}

// GPT-Neo: unscaled scores, global and local layers from attention_types.
TEST(HfImportGptNeo, UnscaledScoresAndLocalLayers) {
  nlohmann::json c = {{"model_type", "gpt_neo"},
                      {"hidden_size", 64},
                      {"num_layers", 4},
                      {"num_heads", 4},
                      {"vocab_size", 300},
                      {"window_size", 16},
                      {"attention_types", {{{"global", "local"}, 2}}}};
  const spec::HfImport imp = spec::hf_config_import(c, "gpt_neo/config.json");
  const Architecture& a = imp.arch;
  EXPECT_EQ(a.attention_scale(), 1.0);
  EXPECT_EQ(a.layer_type(0), spec::LayerType::kFull);
  EXPECT_EQ(a.layer_type(1), spec::LayerType::kSliding);
  EXPECT_EQ(a.layer_type(3), spec::LayerType::kSliding);
  EXPECT_EQ(a.attention.sliding_window, 16);
  EXPECT_FALSE(a.attention.qkv_bias);
  EXPECT_TRUE(a.attention.out_bias);
  EXPECT_EQ(a.intermediate_size, 256);
  EXPECT_EQ(a.position.kind, spec::PositionKind::kLearned);
  TempSpecs tmp;
  EXPECT_EQ(write_and_load(imp, tmp, "gpt_neo.yaml"), a);
  c["attention_types"] = {{{"global", "local"}, 1}};
  EXPECT_NE(import_error(c).find("attention_types"), std::string::npos) << "2 layers for 4: " << import_error(c);
  c["attention_types"] = {{{"global", "sparse"}, 2}};
  EXPECT_NE(import_error(c).find("sparse"), std::string::npos) << import_error(c);
}

// BioGPT: scaled token embeddings, eps 1e-5 whatever layer_norm_eps says.
TEST(HfImportBioGpt, ScaledEmbeddingsAndDefaultEps) {
  nlohmann::json c = {{"model_type", "biogpt"},   {"hidden_size", 64}, {"num_hidden_layers", 2},
                      {"num_attention_heads", 4}, {"vocab_size", 300}, {"intermediate_size", 128},
                      {"layer_norm_eps", 1e-12}};
  Architecture a = spec::hf_config_import(c, "biogpt/config.json").arch;
  EXPECT_TRUE(a.embedding.scale_by_sqrt_hidden);
  EXPECT_EQ(a.norm.eps, 1e-5) << "nn.LayerNorm's default: no BioGPT module reads layer_norm_eps";
  EXPECT_EQ(a.position.kind, spec::PositionKind::kLearned);
  EXPECT_TRUE(a.embedding.tied);
  c["scale_embedding"] = false;
  EXPECT_FALSE(spec::hf_config_import(c, "biogpt/config.json").arch.embedding.scale_by_sqrt_hidden);
}

// A small BERT-style encoder config of `model_type` plus `extra`.
nlohmann::json small_encoder(const std::string& model_type, const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json c = {{"model_type", model_type},       {"hidden_size", 64},        {"num_hidden_layers", 2},
                      {"num_attention_heads", 4},       {"intermediate_size", 128}, {"vocab_size", 300},
                      {"max_position_embeddings", 514}, {"type_vocab_size", 1}};
  c.update(extra);
  return c;
}

// RoBERTa, XLM-RoBERTa, CamemBERT: BERT's encoder; two table rows go to padding.
TEST(HfImportRoberta, BertEncoderWithFairseqPositions) {
  for (const char* mt : {"roberta", "xlm-roberta", "camembert"}) {
    nlohmann::json c = small_encoder(mt, {{"pad_token_id", 1}, {"layer_norm_eps", 1e-5}});
    const Architecture a = spec::hf_config_import(c, "config.json").arch;
    EXPECT_EQ(a.max_position_embeddings, 512) << mt << ": 514 rows, positions from row 2";
    EXPECT_EQ(a.norm.placement, spec::NormPlacement::kPost) << mt;
    EXPECT_FALSE(a.attention.causal) << mt;
    EXPECT_EQ(a.head.kind, spec::HeadKind::kNone) << mt;
    EXPECT_EQ(a.embedding.type_vocab_size, 1) << mt;
    EXPECT_EQ(a.norm.eps, 1e-5) << mt;
    c["pad_token_id"] = 0;
    EXPECT_NE(import_error(c).find("pad_token_id"), std::string::npos) << mt << ": " << import_error(c);
  }
}

// ELECTRA imports when its embeddings are as wide as its layers; DistilBERT under its keys.
TEST(HfImportElectraDistilBert, EncodersUnderTheirKeys) {
  nlohmann::json c = small_encoder("electra", {{"embedding_size", 64}, {"max_position_embeddings", 512}});
  Architecture a = spec::hf_config_import(c, "electra/config.json").arch;
  EXPECT_EQ(a.max_position_embeddings, 512) << "positions from row 0";
  EXPECT_TRUE(a.embedding.norm);
  c["embedding_size"] = 16;  // ELECTRA-small: embeddings_project
  EXPECT_NE(import_error(c).find("embedding_size"), std::string::npos) << import_error(c);
  c.erase("embedding_size");  // the class default, 128
  EXPECT_NE(import_error(c).find("embedding_size"), std::string::npos) << import_error(c);

  const nlohmann::json d = {
      {"model_type", "distilbert"},  {"dim", 64}, {"n_layers", 3}, {"n_heads", 4}, {"vocab_size", 300},
      {"sinusoidal_pos_embds", true}};
  a = spec::hf_config_import(d, "distilbert/config.json").arch;
  EXPECT_EQ(a.hidden_size, 64);
  EXPECT_EQ(a.num_hidden_layers, 3);
  EXPECT_EQ(a.intermediate_size, 256) << "hidden_dim absent: 4 x dim";
  EXPECT_EQ(a.embedding.type_vocab_size, 0);
  EXPECT_EQ(a.norm.eps, 1e-12);
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kPost);
  EXPECT_EQ(a.mlp.activation, spec::Activation::kGelu);
}

// Arcee and Nemotron: ungated squared-relu MLPs; Nemotron's LayerNorm1P and partial rope.
TEST(HfImportNemotronArcee, SquaredReluAndLayerNorm1P) {
  nlohmann::json c = small_decoder("arcee", {{"num_key_value_heads", 2}});
  Architecture a = spec::hf_config_import(c, "arcee/config.json").arch;
  EXPECT_EQ(a.mlp.activation, spec::Activation::kRelu2);
  EXPECT_FALSE(a.mlp.gated);
  EXPECT_EQ(a.norm.kind, spec::NormKind::kRmsNorm);
  c["hidden_act"] = "silu";  // an ungated silu MLP is still a model
  EXPECT_EQ(spec::hf_config_import(c, "arcee/config.json").arch.mlp.activation, spec::Activation::kSilu);

  nlohmann::json n = small_decoder("nemotron", {{"norm_eps", 1e-5}, {"mlp_bias", true}});
  const spec::HfImport imp = spec::hf_config_import(n, "nemotron/config.json");
  a = imp.arch;
  EXPECT_EQ(a.norm.kind, spec::NormKind::kLayerNorm);
  EXPECT_EQ(a.norm.weight_offset, 1.0) << "LayerNorm1P scales by 1 + w";
  EXPECT_TRUE(a.norm.bias);
  EXPECT_EQ(a.mlp.activation, spec::Activation::kRelu2);
  EXPECT_TRUE(a.mlp.bias);
  EXPECT_EQ(a.position.partial_rotary_factor, 0.5);
  EXPECT_EQ(a.position.rope_style, spec::RopeStyle::kNeox);
  TempSpecs tmp;
  EXPECT_EQ(write_and_load(imp, tmp, "nemotron.yaml"), a);
}

// SmolLM3: every fourth layer without rope by default, or as no_rope_layers lists.
TEST(HfImportSmolLm3, NoRopeLayers) {
  nlohmann::json c = small_decoder("smollm3", {{"num_hidden_layers", 8}, {"num_key_value_heads", 2}});
  const spec::HfImport imp = spec::hf_config_import(c, "smollm3/config.json");
  const Architecture& a = imp.arch;
  EXPECT_EQ(a.position.rope_layers, (std::vector<bool>{true, true, true, false}));
  EXPECT_TRUE(a.layer_has_rope(2));
  EXPECT_FALSE(a.layer_has_rope(3));
  EXPECT_FALSE(a.layer_has_rope(7));
  EXPECT_EQ(a.position.rope_theta, 2000000.0);
  EXPECT_TRUE(a.embedding.tied);
  TempSpecs tmp;
  EXPECT_EQ(write_and_load(imp, tmp, "smollm3.yaml"), a);
  c["no_rope_layers"] = {1, 0, 1, 1, 1, 0, 1, 1};
  EXPECT_EQ(spec::hf_config_import(c, "smollm3/config.json").arch.position.rope_layers,
            (std::vector<bool>{true, false, true, true}));
  c["no_rope_layers"] = {1, 0, 1};
  EXPECT_NE(import_error(c).find("no_rope_layers"), std::string::npos) << import_error(c);
  c.erase("no_rope_layers");
  c["use_sliding_window"] = true;  // the NoPE layers slide
  c["sliding_window"] = 16;
  const Architecture s = spec::hf_config_import(c, "smollm3/config.json").arch;
  EXPECT_EQ(s.layer_type(3), spec::LayerType::kSliding);
  EXPECT_EQ(s.layer_type(2), spec::LayerType::kFull);
}

// Cohere 2: Cohere's layer, three sliding layers in four, rope on the sliding ones only.
TEST(HfImportCohere2, SlidingLayersCarryTheRope) {
  nlohmann::json c = small_decoder("cohere2", {{"num_hidden_layers", 8}, {"sliding_window", 32}});
  const spec::HfImport imp = spec::hf_config_import(c, "cohere2/config.json");
  const Architecture& a = imp.arch;
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kParallelShared);
  EXPECT_FALSE(a.norm.bias);
  EXPECT_EQ(a.layer_type(0), spec::LayerType::kSliding);
  EXPECT_EQ(a.layer_type(3), spec::LayerType::kFull);
  EXPECT_TRUE(a.layer_has_rope(0));
  EXPECT_FALSE(a.layer_has_rope(3));
  EXPECT_EQ(a.position.rope_theta, 10000.0) << "Cohere2Config has no default_theta of its own";
  EXPECT_EQ(a.position.rope_style, spec::RopeStyle::kGptj);
  EXPECT_EQ(a.head.logit_scale, 0.0625);
  TempSpecs tmp;
  EXPECT_EQ(write_and_load(imp, tmp, "cohere2.yaml"), a);
  c["sliding_window_pattern"] = 2;
  EXPECT_EQ(spec::hf_config_import(c, "cohere2/config.json").arch.position.rope_layers,
            (std::vector<bool>{true, false}));
  c["sliding_window_pattern"] = 1;  // no sliding layer: no rope anywhere
  EXPECT_NE(import_error(c).find("no layer would have rope"), std::string::npos) << import_error(c);
}

// ModernBERT: the 4.x keys and 5.x's layer_types / rope_parameters make one spec; the
// window is local_attention / 2 + 1 (HF masks |i - j| <= local_attention / 2); layer 0
// has no attention norm; layer_types must agree with global_attn_every_n_layers.
TEST(HfImport4x, ModernBertWindowsThetasAndTheFirstLayer) {
  nlohmann::json c = nlohmann::json::parse(fs_read_file(v4("modernbert-base")));
  const Architecture a = spec::hf_config_import(c, "m/config.json").arch;
  EXPECT_EQ(a.attention.layer_types, (std::vector<LayerType>{F, S, S}));
  EXPECT_EQ(a.attention.sliding_window, 65);
  EXPECT_FALSE(a.attention.causal);
  EXPECT_EQ(a.position.rope_theta, 160000.0);
  EXPECT_EQ(a.position.local_rope_theta, 10000.0);
  EXPECT_FALSE(a.norm.first_attention_norm);
  EXPECT_FALSE(a.norm.bias);
  EXPECT_TRUE(a.mlp.gated);
  EXPECT_EQ(a.mlp.activation, spec::Activation::kGelu);
  // The 5.x form of the same config.
  nlohmann::json v5 = c;
  v5.erase("global_rope_theta");
  v5.erase("local_rope_theta");
  v5["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 160000.0}}},
                           {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
  nlohmann::json types = nlohmann::json::array();
  for (int l = 0; l < 22; ++l) types.push_back(l % 3 ? "sliding_attention" : "full_attention");
  v5["layer_types"] = types;
  expect_same_model(spec::hf_config_import(v5, "m/config.json").arch, a, "5.x form");
  v5["local_attention"] = 8;
  EXPECT_EQ(spec::hf_config_import(v5, "m/config.json").arch.attention.sliding_window, 5);
  v5["layer_types"][4] = "full_attention";
  EXPECT_NE(import_error(v5).find("layer_types[4]: found \"full_attention\", expected \"sliding_attention\" "
                                  "(global_attn_every_n_layers = 3)"),
            std::string::npos)
      << import_error(v5);
  c["local_rope_theta"] = 0;
  EXPECT_NE(import_error(c).find("local_rope_theta: found 0.0, expected a number > 0"), std::string::npos)
      << import_error(c);
  c["local_rope_theta"] = 10000.0;
  c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
  EXPECT_NE(import_error(c).find("rope_scaling: found rope scaling, expected none"), std::string::npos)
      << import_error(c);
}

TEST(HfImport4x, Qwen2SlidingLayersFromMaxWindowLayers) {
  // 4.x Qwen2: with use_sliding_window, layers from max_window_layers on slide.
  nlohmann::json c = nlohmann::json::parse(fs_read_file(v4("qwen2.5-7b")));
  c["use_sliding_window"] = true;
  c["sliding_window"] = 4096;
  c["num_hidden_layers"] = 6;
  c["max_window_layers"] = 4;
  const Architecture a = spec::hf_config_import(c, "q/config.json").arch;
  EXPECT_EQ(per_layer(a), (std::vector<LayerType>{F, F, F, F, S, S}));
  EXPECT_EQ(a.attention.layer_types.size(), 6u) << "no shorter period";
  EXPECT_EQ(a.attention.sliding_window, 4096);
  c["use_sliding_window"] = false;  // the window is then unused, as in Qwen2.5's own configs
  const Architecture b = spec::hf_config_import(c, "q/config.json").arch;
  EXPECT_EQ(per_layer(b), std::vector<LayerType>(6, F));
  EXPECT_FALSE(b.attention.sliding_window.has_value());
}

TEST(HfImport4x, Gemma2WithoutLayerTypesAlternatesFromSliding) {
  const Architecture a = spec::hf_config_import_file(v4("gemma-2-9b")).arch;
  EXPECT_EQ(a.attention.layer_types, (std::vector<LayerType>{S, F}));
  EXPECT_EQ(a.layer_type(0), S);
  EXPECT_EQ(a.layer_type(41), F);
  EXPECT_TRUE(a.embedding.tied) << "Gemma2Config default: the key is absent";
}

// 4.x fixture folder -> hand-written spec; dtype override where the config records none.
struct V4Case {
  const char* folder;
  const char* spec;
  std::optional<DType> dtype;
};

TEST(HfImport4x, ImportsToTheHandWrittenSpecs) {
  const std::vector<V4Case> cases = {
      {"llama-3.1-8b", "llama-3.1-8b", {}},
      {"mistral-7b", "mistral-7b", {}},
      {"mixtral-8x7b", "mixtral-8x7b", {}},
      {"qwen2.5-7b", "qwen2.5-7b", {}},
      {"qwen3-8b", "qwen3-8b", {}},
      {"qwen3-30b-a3b", "qwen3-30b-a3b", {}},
      {"gemma-2-9b", "gemma-2-9b", {}},
      {"gemma-3-27b", "gemma-3-27b", {}},
      {"phi-3-mini", "phi-3-mini", {}},
      {"gpt2", "gpt2", DType::kF16},
      {"bert-base", "bert-base", DType::kF16},
      {"modernbert-base", "modernbert-base", DType::kBF16},
  };
  EXPECT_EQ(cases.size(), fixture_dirs("hf_v4").size()) << "every 4.x fixture has a case";
  TempSpecs tmp;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.folder);
    spec::Diagnostics diags;
    const auto doc =
        spec::architecture_load_file((kSrc / "specs/architectures" / (std::string(c.spec) + ".yaml")).string(), diags);
    ASSERT_TRUE(doc.has_value()) << diags.to_string();
    spec::HfImportOptions o;
    o.dtype = c.dtype;
    const spec::HfImport imp = spec::hf_config_import_file(v4(c.folder), o);
    EXPECT_TRUE(imp.arch.checkpoint.empty()) << "no weights beside these configs";
    expect_same_model(imp.arch, doc->full, c.folder);
    EXPECT_EQ(imp.arch.family, doc->full.family);
    const Architecture loaded = write_and_load(imp, tmp, std::string(c.folder) + ".yaml");
    expect_same_model(loaded, doc->full, std::string(c.folder) + " (written and loaded)");
  }
}

TEST(HfImport4x, NamesAndProvenance) {
  const auto qwen = spec::hf_config_import_file(v4("qwen2.5-7b"));
  EXPECT_EQ(qwen.arch.name, "Qwen2.5-7B-Instruct") << "from _name_or_path";
  EXPECT_EQ(qwen.arch.hf_id, "Qwen/Qwen2.5-7B-Instruct");
  const auto llama = spec::hf_config_import_file(v4("llama-3.1-8b"));
  EXPECT_EQ(llama.arch.name, "llama-3.1-8b") << "from the folder";
  EXPECT_EQ(llama.arch.hf_id, "");
  EXPECT_EQ(llama.arch.dtype, DType::kBF16) << "torch_dtype";
  EXPECT_NE(llama.arch.source.find("transformers 4.42.3"), std::string::npos) << llama.arch.source;
  spec::HfImportOptions o;
  o.name = "my-llama";
  EXPECT_EQ(spec::hf_config_import_file(v4("llama-3.1-8b"), o).arch.name, "my-llama");
  // gemma-3: the text_config, with the Gemma3TextConfig defaults named in the source.
  const auto gemma = spec::hf_config_import_file(v4("gemma-3-27b"));
  EXPECT_EQ(gemma.arch.model_type, "gemma3_text");
  EXPECT_NE(gemma.arch.source.find("text_config of"), std::string::npos);
  for (const char* d : {"text_config.vocab_size=262208", "text_config.rope_local_base_freq=10000.0",
                        "text_config.sliding_window_pattern=6", "text_config.rope_theta=1000000.0"})
    EXPECT_NE(gemma.arch.source.find(d), std::string::npos) << d << " in " << gemma.arch.source;
  // gpt2 and bert record no torch_dtype: fp32, said so.
  const auto gpt2 = spec::hf_config_import_file(v4("gpt2"));
  EXPECT_EQ(gpt2.arch.dtype, DType::kF32);
  EXPECT_NE(gpt2.arch.source.find("dtype=fp32"), std::string::npos);
}

TEST(HfImportNames, SpecNameFromText) {
  EXPECT_EQ(spec::hf_spec_name("Llama-3.1-8B"), "Llama-3.1-8B");
  EXPECT_EQ(spec::hf_spec_name("__my model!"), "my-model-");
  EXPECT_EQ(spec::hf_spec_name(".."), "");
}

TEST(HfImportWrite, FloatsReadBackExactly) {
  for (double v : {1e-5, 1e-6, 1e-12, 500000.0, 1e6, 0.1, 1.0 / 3.0, 10000.0, 2.5e-7})
    EXPECT_EQ(std::stod(spec::yaml_float_text(v)), v) << spec::yaml_float_text(v);
  EXPECT_EQ(spec::yaml_float_text(500000.0), "500000.0");
  EXPECT_EQ(spec::yaml_float_text(1e-5), "1.0e-05");
  EXPECT_EQ(spec::yaml_float_text(1e6), "1000000.0");
}

// Persimmon: pre-LayerNorm, GPT-NeoX's fused qkv, squared ReLU, per-head LayerNorms of q
// and k, rope on half of each head at theta 25000 (the class defaults); Phi's
// qk_layernorm is the same per-head LayerNorm.
TEST(HfImportPersimmon, PerHeadLayerNormOfQAndK) {
  TempSpecs tmp;
  const nlohmann::json c = {{"model_type", "persimmon"},     {"hidden_size", 64},        {"num_hidden_layers", 2},
                            {"num_attention_heads", 4},      {"intermediate_size", 256}, {"vocab_size", 300},
                            {"max_position_embeddings", 128}};
  const spec::HfImport imp = spec::hf_config_import(c, "persimmon/config.json");
  const Architecture& a = imp.arch;
  EXPECT_EQ(a.norm.kind, spec::NormKind::kLayerNorm);
  EXPECT_TRUE(a.norm.bias);
  EXPECT_EQ(a.norm.placement, spec::NormPlacement::kPre);
  EXPECT_TRUE(a.attention.qk_norm);
  EXPECT_FALSE(a.attention.qk_norm_full);
  EXPECT_EQ(a.mlp.activation, spec::Activation::kRelu2);
  EXPECT_FALSE(a.mlp.gated);
  EXPECT_TRUE(a.mlp.bias && a.attention.qkv_bias && a.attention.out_bias);
  EXPECT_EQ(a.num_key_value_heads, 4);
  EXPECT_EQ(a.head_dim, 16);
  EXPECT_DOUBLE_EQ(a.position.rope_theta, 25000.0);
  EXPECT_DOUBLE_EQ(a.position.partial_rotary_factor, 0.5);
  EXPECT_EQ(a.rotary_dim(), 8);
  EXPECT_FALSE(a.embedding.tied);
  EXPECT_EQ(write_and_load(imp, tmp, "persimmon.yaml"), a);
  nlohmann::json off = c;
  off["qk_layernorm"] = false;
  EXPECT_FALSE(spec::hf_config_import(off, "persimmon/config.json").arch.attention.qk_norm);

  nlohmann::json phi = {{"model_type", "phi"},      {"hidden_size", 64},        {"num_hidden_layers", 2},
                        {"num_attention_heads", 4}, {"intermediate_size", 256}, {"vocab_size", 300},
                        {"qk_layernorm", true}};
  const Architecture p = spec::hf_config_import(phi, "phi/config.json").arch;
  EXPECT_TRUE(p.attention.qk_norm);
  EXPECT_EQ(p.norm.kind, spec::NormKind::kLayerNorm);
}

// YaRN rope scaling (rope_type yarn) in its published forms: Qwen's 4.x rope_scaling,
// DeepSeek's mscales, gpt-oss's truncate false; without original_max_position_embeddings
// HF takes max_position_embeddings; a lone mscale is dropped, as HF ignores it. Each
// spec is written and read back.
TEST(HfImportYarn, PublishedForms) {
  TempSpecs tmp;
  nlohmann::json qwen = small_decoder(
      "qwen2", {{"max_position_embeddings", 131072}, {"rope_theta", 1000000.0}, {"num_key_value_heads", 2}});
  qwen["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}};
  const spec::HfImport q = spec::hf_config_import(qwen, "qwen2/config.json");
  const spec::RopeScaling& qs = q.arch.position.rope_scaling;
  EXPECT_EQ(qs.type, spec::RopeScalingType::kYarn);
  EXPECT_DOUBLE_EQ(qs.factor, 4.0);
  EXPECT_EQ(qs.original_max_position_embeddings, 32768);
  EXPECT_DOUBLE_EQ(qs.beta_fast, 32.0);
  EXPECT_DOUBLE_EQ(qs.beta_slow, 1.0);
  EXPECT_EQ(qs.mscale, 0.0);
  EXPECT_FALSE(qs.attention_factor.has_value());
  EXPECT_TRUE(qs.truncate);
  EXPECT_EQ(write_and_load(q, tmp, "qwen2-yarn.yaml").position.rope_scaling, qs);

  nlohmann::json ds = small_decoder("llama", {{"max_position_embeddings", 163840}});
  ds["rope_scaling"] = {{"type", "yarn"},
                        {"factor", 40},
                        {"mscale", 1.0},
                        {"mscale_all_dim", 0.707},
                        {"beta_fast", 16},
                        {"beta_slow", 2},
                        {"original_max_position_embeddings", 4096}};
  const spec::HfImport d = spec::hf_config_import(ds, "llama/config.json");
  const spec::RopeScaling& dsr = d.arch.position.rope_scaling;
  EXPECT_DOUBLE_EQ(dsr.mscale, 1.0);
  EXPECT_DOUBLE_EQ(dsr.mscale_all_dim, 0.707);
  EXPECT_DOUBLE_EQ(dsr.beta_fast, 16.0);
  EXPECT_DOUBLE_EQ(dsr.beta_slow, 2.0);
  EXPECT_EQ(write_and_load(d, tmp, "llama-yarn.yaml").position.rope_scaling, dsr);
  EXPECT_EQ(spec::architecture_from_json(spec::to_json(d.arch), "/a"), d.arch) << "the job file's JSON";
  ds["rope_scaling"]["attention_factor"] = 1.25;
  const spec::HfImport given = spec::hf_config_import(ds, "llama/config.json");
  EXPECT_EQ(given.arch.position.rope_scaling.attention_factor, 1.25);
  EXPECT_EQ(given.arch.position.rope_scaling.mscale, 0.0) << "attention_factor wins over the mscales, as in HF";
  EXPECT_EQ(spec::architecture_from_json(spec::to_json(given.arch), "/a"), given.arch);
  EXPECT_EQ(write_and_load(given, tmp, "llama-yarn-af.yaml").position.rope_scaling, given.arch.position.rope_scaling);

  nlohmann::json oss = small_decoder("llama", {{"max_position_embeddings", 2048}});
  oss["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 150000.0}, {"factor", 32.0}, {"truncate", false},
                            {"beta_fast", 32.0},   {"beta_slow", 1.0},       {"mscale", 1.0}};
  const spec::HfImport o = spec::hf_config_import(oss, "llama/config.json");
  const spec::RopeScaling& os = o.arch.position.rope_scaling;
  EXPECT_FALSE(os.truncate);
  EXPECT_EQ(os.original_max_position_embeddings, 2048) << "max_position_embeddings stands in";
  EXPECT_EQ(os.mscale, 0.0) << "mscale without mscale_all_dim is not used";
  EXPECT_EQ(write_and_load(o, tmp, "oss-yarn.yaml").position.rope_scaling, os);
}

}  // namespace
}  // namespace fk::testing
