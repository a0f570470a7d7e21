// One failing architecture spec per validation rule: each must produce exactly the
// expected message, at the expected line, naming the expected field.
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <functional>

namespace fk::testing {
namespace {

struct Case {
  const char* name;
  std::function<std::string(std::string)> mutate;
  const char* field;         // expected field path in the message
  const char* message;       // expected substring of the message
  const char* line_prefix;   // the error must point at the first line starting with this (or "" = any)
};

std::string insert_after(const std::string& text, const std::string& prefix, const std::string& lines) {
  const int n = line_of(text, prefix);
  std::string out;
  int i = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    out += text.substr(pos, nl - pos + 1);
    pos = nl + 1;
    if (++i == n) out += lines;
  }
  return out;
}

std::string remove_line(const std::string& text, const std::string& prefix) {
  return replace_line(text, prefix, "# removed");
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"UnknownKeyWithHint", [](std::string t) { return insert_after(t, "vocab_size:", "hidden_sise: 5\n"); },
       "hidden_sise", "unknown field; did you mean 'hidden_size'?", "hidden_sise:"},
      {"WrongType", [](std::string t) { return replace_line(t, "hidden_size:", "hidden_size: big"); }, "hidden_size",
       "found 'big', expected an integer", "hidden_size:"},
      {"QuotedNumberIsAString", [](std::string t) { return replace_line(t, "hidden_size:", "hidden_size: \"4096\""); },
       "hidden_size", "found the string \"4096\", expected an integer", "hidden_size:"},
      {"MissingRequired", [](std::string t) { return remove_line(t, "vocab_size:"); }, "vocab_size",
       "required field is missing", ""},
      {"OutOfRange", [](std::string t) { return replace_line(t, "hidden_size:", "hidden_size: 0"); }, "hidden_size",
       "0 is out of range", "hidden_size:"},
      {"KvHeadsDoNotDivide",
       [](std::string t) { return replace_line(t, "num_key_value_heads:", "num_key_value_heads: 5"); },
       "num_key_value_heads", "5 does not divide num_attention_heads (32)", "num_key_value_heads:"},
      {"KvHeadsMoreThanHeads",
       [](std::string t) { return replace_line(t, "num_key_value_heads:", "num_key_value_heads: 64"); },
       "num_key_value_heads", "64 is more than num_attention_heads (32)", "num_key_value_heads:"},
      {"EnumTypoWithHint", [](std::string t) { return replace_line(t, "kind: rmsnorm", "kind: rmsnrom"); }, "norm.kind",
       "'rmsnrom' is not one of [rmsnorm, layernorm]; did you mean 'rmsnorm'?", "kind: rmsnrom"},
      {"EpsOutOfRange", [](std::string t) { return replace_line(t, "eps:", "eps: 0"); }, "norm.eps",
       "0 is out of range", "eps:"},
      {"MissingSection", [](std::string t) { return remove_line(remove_line(t, "mlp:"), "activation:"); }, "mlp",
       "required section is missing", ""},
      {"UnknownKeyInSection", [](std::string t) { return replace_line(t, "causal:", "casual: true"); },
       "attention.casual", "did you mean 'causal'?", "casual:"},
      {"BoolWrongType", [](std::string t) { return replace_line(t, "causal:", "causal: maybe"); }, "attention.causal",
       "found 'maybe', expected true or false", "causal:"},
      {"OddRotaryDim", [](std::string t) { return replace_line(t, "head_dim:", "head_dim: 127"); }, "head_dim",
       "must be an even whole number", "head_dim:"},
      {"PartialRotaryNotWhole",
       [](std::string t) { return insert_after(t, "rope_theta:", "  partial_rotary_factor: 0.3\n"); },
       "position.partial_rotary_factor", "38.4 must be an even whole number", "partial_rotary_factor:"},
      {"SlidingLayersWithoutWindow",
       [](std::string t) { return insert_after(t, "causal:", "  layer_types: [sliding, full]\n"); },
       "attention.layer_types", "lists sliding layers but attention.sliding_window is not set", "layer_types:"},
      {"WindowWithoutSlidingLayer",
       [](std::string t) { return insert_after(t, "causal:", "  sliding_window: 64\n  layer_types: [full]\n"); },
       "attention.sliding_window", "no layer in attention.layer_types is sliding", "sliding_window:"},
      {"BadLayerType",
       [](std::string t) {
         return insert_after(t, "causal:", "  sliding_window: 64\n  layer_types: [sliding, global]\n");
       },
       "attention.layer_types[1]", "'global' is not one of [full, sliding]", "layer_types:"},
      {"PatternLongerThanModel",
       [](std::string t) {
         return insert_after(replace_line(t, "num_hidden_layers: 32", "num_hidden_layers: 2"), "causal:",
                             "  sliding_window: 64\n  layer_types: [sliding, sliding, full]\n");
       },
       "attention.layer_types", "the pattern has 3 entries but the model has only 2 layers", "layer_types:"},
      {"FirstAttentionNormNeedsLayerNorm",
       [](std::string t) { return insert_after(t, "kind: rmsnorm", "  first_attention_norm: false\n"); },
       "norm.first_attention_norm", "applies only to norm.kind layernorm with norm.placement pre (found rmsnorm pre)",
       "first_attention_norm:"},
      {"FirstAttentionNormNeedsPre",
       [](std::string t) {
         return insert_after(t, "kind: rmsnorm", "  placement: sandwich\n  first_attention_norm: false\n");
       },
       "norm.first_attention_norm",
       "applies only to norm.kind layernorm with norm.placement pre (found rmsnorm sandwich)", "first_attention_norm:"},
      {"MoeTopKMoreThanExperts",
       [](std::string t) { return t + "moe: {num_experts: 4, experts_per_token: 8, moe_intermediate_size: 128}\n"; },
       "moe.experts_per_token", "8 is more than moe.num_experts (4)", "moe:"},
      {"MoeNoMoeLayerLeft",
       [](std::string t) {
         return t + "moe: {num_experts: 4, experts_per_token: 2, moe_intermediate_size: 128, first_dense_layers: 32}\n";
       },
       "moe.first_dense_layers", "32 leaves no MoE layer in 32 layers", "moe:"},
      {"MoeSharedWithoutSize",
       [](std::string t) {
         return t + "moe: {num_experts: 4, experts_per_token: 2, moe_intermediate_size: 128, shared_experts: 1}\n";
       },
       "moe.shared_intermediate_size", "is required when moe.shared_experts > 0", ""},
      {"Llama3LowNotBelowHigh",
       [](std::string t) {
         return insert_after(t, "rope_theta:",
                             "  rope_scaling: {type: llama3, factor: 8.0, low_freq_factor: 4.0, high_freq_factor: "
                             "1.0, original_max_position_embeddings: 4096}\n");
       },
       "position.rope_scaling.low_freq_factor", "4 must be less than high_freq_factor (1)", "rope_scaling:"},
      {"YarnWithoutOriginal",
       [](std::string t) { return insert_after(t, "rope_theta:", "  rope_scaling: {type: yarn, factor: 4.0}\n"); },
       "position.rope_scaling.original_max_position_embeddings", "is required for yarn scaling", "rope_scaling:"},
      {"YarnBetasReversed",
       [](std::string t) {
         return insert_after(t, "rope_theta:",
                             "  rope_scaling: {type: yarn, factor: 4.0, original_max_position_embeddings: 4096, "
                             "beta_fast: 1.0, beta_slow: 32.0}\n");
       },
       "position.rope_scaling.beta_fast", "1 must be greater than beta_slow (32)", "rope_scaling:"},
      {"YarnLoneMscale",
       [](std::string t) {
         return insert_after(
             t, "rope_theta:",
             "  rope_scaling: {type: yarn, factor: 4.0, original_max_position_embeddings: 4096, mscale: 1.0}\n");
       },
       "position.rope_scaling.mscale", "applies only with both mscale and mscale_all_dim", "rope_scaling:"},
      {"YarnKeyUnderLlama3",
       [](std::string t) {
         return insert_after(
             t, "rope_theta:",
             "  rope_scaling: {type: llama3, factor: 8.0, original_max_position_embeddings: 4096, beta_fast: 16.0}\n");
       },
       "position.rope_scaling.beta_fast", "applies only to rope_scaling type yarn", "rope_scaling:"},
      {"Llama3KeyUnderYarn",
       [](std::string t) {
         return insert_after(t, "rope_theta:",
                             "  rope_scaling: {type: yarn, factor: 4.0, original_max_position_embeddings: 4096, "
                             "low_freq_factor: 1.0}\n");
       },
       "position.rope_scaling.low_freq_factor", "applies only to rope_scaling type llama3", "rope_scaling:"},
      {"PerHeadWithoutQkNorm", [](std::string t) { return insert_after(t, "causal:", "  qk_norm_per_head: true\n"); },
       "attention.qk_norm_per_head", "attention.qk_norm is false", "qk_norm_per_head:"},
      {"QkNormBiasWithRmsNorm",
       [](std::string t) { return insert_after(t, "causal:", "  qk_norm: true\n  qk_norm_bias: true\n"); },
       "attention.qk_norm_bias", "needs attention.qk_norm and norm.kind layernorm", "qk_norm_bias:"},
      {"PerHeadAndFull",
       [](std::string t) {
         return insert_after(t, "causal:", "  qk_norm: true\n  qk_norm_full: true\n  qk_norm_per_head: true\n");
       },
       "attention.qk_norm_per_head", "exclude each other", "qk_norm_per_head:"},
      {"Llama3OriginalBeyondMax",
       [](std::string t) {
         return insert_after(t, "rope_theta:",
                             "  rope_scaling: {type: llama3, factor: 8.0, original_max_position_embeddings: 16384}\n");
       },
       "position.rope_scaling.original_max_position_embeddings", "16384 exceeds max_position_embeddings (8192)",
       "rope_scaling:"},
      {"LocalThetaWithoutSliding",
       [](std::string t) { return insert_after(t, "rope_theta:", "  local_rope_theta: 10000.0\n"); },
       "position.local_rope_theta", "applies to sliding layers, and no layer is sliding", "local_rope_theta:"},
      {"TiedNeedsHead", [](std::string t) { return t + "embedding: {tied: true}\nhead: {kind: none}\n"; },
       "embedding.tied", "tied embeddings need an LM head", "embedding:"},
      {"HeadBiasNeedsLmHead", [](std::string t) { return t + "head: {kind: none, final_norm: true, bias: true}\n"; },
       "head.bias", "applies only to head.kind lm", "head:"},
      {"LogitScaleNeedsLmHead", [](std::string t) { return t + "head: {kind: none, logit_scale: 0.5}\n"; },
       "head.logit_scale", "applies only to head.kind lm", "head:"},
      {"AttentionScaleTwice",
       [](std::string t) { return insert_after(t, "causal:", "  scale: 0.125\n  query_pre_attn_scalar: 64\n"); },
       "attention.scale", "both set the softmax scale; give one", "scale:"},
      {"EmbeddingMultiplierWithSqrtScale",
       [](std::string t) { return t + "embedding: {multiplier: 12.0, scale_by_sqrt_hidden: true}\n"; },
       "embedding.multiplier", "both scale the embeddings; give one", "embedding:"},
      {"EmbeddingMultiplierOutOfRange", [](std::string t) { return t + "embedding: {multiplier: 0}\n"; },
       "embedding.multiplier", "out of range", "embedding:"},
      {"ResidualMultiplierOutOfRange",
       [](std::string t) { return insert_after(t, "eps:", "  residual_multiplier: -0.5\n"); },
       "norm.residual_multiplier", "out of range", "residual_multiplier:"},
      {"NormBiasNeedsLayerNorm", [](std::string t) { return insert_after(t, "eps:", "  bias: false\n"); }, "norm.bias",
       "applies only to norm.kind layernorm", "bias:"},
      {"GatedRelu2HasNoBaseline", [](std::string t) { return replace_line(t, "activation:", "  activation: relu2"); },
       "mlp.activation", "applies only to ungated MLPs", "activation:"},
      {"RopeLayersAllNope",
       [](std::string t) { return insert_after(t, "rope_theta:", "  rope_layers: [nope, nope]\n"); },
       "position.rope_layers", "lists no rope layer", "rope_layers:"},
      {"RopeLayersUnknownKind",
       [](std::string t) { return insert_after(t, "rope_theta:", "  rope_layers: [rope, none]\n"); },
       "position.rope_layers[1]", "'none' is not one of [rope, nope]", "rope_layers:"},
      {"NormWithoutWeightTakesNoOffset",
       [](std::string t) { return insert_after(t, "eps:", "  weight: false\n  weight_offset: 1.0\n"); }, "norm.weight",
       "nothing for norm.weight_offset", "weight:"},
      {"SharedExpertGateWithoutSharedExperts",
       [](std::string t) {
         return t + "moe: {num_experts: 4, experts_per_token: 2, moe_intermediate_size: 8, shared_expert_gate: true}\n";
       },
       "moe.shared_expert_gate", "moe.shared_experts is 0", "moe:"},
      {"ClampedSwigluNeedsSilu",
       [](std::string t) {
         return replace_line(t, "activation:", "  activation: gelu") +
                "moe: {num_experts: 4, experts_per_token: 2, moe_intermediate_size: 8, swiglu_limit: 7.0}\n";
       },
       "moe.swiglu_limit", "needs mlp.activation silu", "moe:"},
      {"ClampedSwigluNotForSharedExperts",
       [](std::string t) {
         return t +
                "moe: {num_experts: 4, experts_per_token: 2, moe_intermediate_size: 8, swiglu_limit: 7.0, "
                "shared_experts: 1, shared_intermediate_size: 8}\n";
       },
       "moe.swiglu_limit", "routed experts only", "moe:"},
      {"SwigluLimitOutOfRange",
       [](std::string t) {
         return t + "moe: {num_experts: 4, experts_per_token: 2, moe_intermediate_size: 8, swiglu_limit: 0}\n";
       },
       "moe.swiglu_limit", "out of range", "moe:"},
      {"QkNormFullNeedsQkNorm", [](std::string t) { return insert_after(t, "causal:", "  qk_norm_full: true\n"); },
       "attention.qk_norm_full", "attention.qk_norm is false", "qk_norm_full:"},
      {"PostBranchNeedsRmsNorm",
       [](std::string t) {
         return insert_after(replace_line(t, "kind: rmsnorm", "kind: layernorm"), "eps:", "  placement: post_branch\n");
       },
       "norm.placement", "post_branch is supported with norm.kind rmsnorm", "placement:"},
      {"UnknownNormPlacementListsTheChoices",
       [](std::string t) { return insert_after(t, "eps:", "  placement: parallel_residual\n"); }, "norm.placement",
       "parallel_shared", "placement:"},
      {"TokenTypesNeedEncoder", [](std::string t) { return t + "embedding: {type_vocab_size: 2}\n"; },
       "embedding.type_vocab_size", "supported for encoders", "embedding:"},
      {"RopeThetaWithLearnedPositions", [](std::string t) { return replace_line(t, "kind: rope", "kind: learned"); },
       "position.rope_theta", "applies only to position.kind rope", "rope_theta:"},
      {"PresetChangesGqaRatio",
       [](std::string t) { return replace_line(t, "num_key_value_heads: 2", "num_key_value_heads: 4"); },
       "presets.tiny.num_key_value_heads", "changes the GQA ratio: 32/8 = 4 in the full model, 8/4 = 2 here",
       "num_key_value_heads: 4"},
      {"PresetBreaksHeadDimRelation", [](std::string t) { return replace_line(t, "head_dim: 16", "head_dim: 32"); },
       "presets.tiny.head_dim", "breaks the head_dim relation", "head_dim: 32"},
      {"PresetChangesStructure", [](std::string t) { return t + "    norm: {kind: layernorm, eps: 1.0e-05}\n"; },
       "presets.tiny.norm.kind", "changes the structure of the full model (rmsnorm -> layernorm)", ""},
      {"PresetChangesIdentity", [](std::string t) { return t + "    model_type: mistral\n"; },
       "presets.tiny.model_type", "cannot be changed by a preset", "model_type: mistral"},
      {"PresetChangesModelFamily", [](std::string t) { return t + "    model_family: transformer\n"; },
       "presets.tiny.model_family", "cannot be changed by a preset", "model_family: transformer"},
      {"UnknownModelFamily", [](std::string t) { return insert_after(t, "vocab_size:", "model_family: rwkv\n"); },
       "model_family", "'rwkv' is not a model family (known: ", "model_family:"},  // the list: ModelFamilies tests
      {"PresetNamedFull", [](std::string t) { return t + "  full: {hidden_size: 64}\n"; }, "presets.full",
       "'full' names the published values", "full:"},
      {"PresetTooFewLayersForPattern",
       [](std::string t) {
         return insert_after(t, "causal:", "  sliding_window: 64\n  layer_types: [sliding, sliding, sliding, full]\n");
       },
       "presets.tiny.num_hidden_layers", "2 layers cannot hold one full period of the layer pattern (4 layers)",
       "num_hidden_layers: 2"},
      {"YamlSyntaxError", [](std::string t) { return replace_line(t, "hidden_size:", "hidden_size: [1, 2"); }, "",
       "YAML syntax error", ""},
      {"DuplicateKey", [](std::string t) { return insert_after(t, "vocab_size:", "vocab_size: 7\n"); }, "vocab_size",
       "duplicate key", "vocab_size: 7"},
      {"KindTypo", [](std::string t) { return replace_line(t, "kind: architecture", "kind: architecure"); }, "kind",
       "did you mean 'architecture'?", "kind: architecure"},
      {"BadName", [](std::string t) { return replace_line(t, "name:", "name: bad name!"); }, "name",
       "must start with a letter or digit", "name:"},
      {"HeadDimMissingAndIndivisible",
       [](std::string t) {
         return remove_line(replace_line(t, "hidden_size: 4096", "hidden_size: 4100"), "head_dim: 128");
       },
       "head_dim", "hidden_size (4100) is not divisible by num_attention_heads (32)", "num_attention_heads: 32"},
  };
  return all;
}

class ArchitectureValidation : public ::testing::TestWithParam<Case> {};

TEST_P(ArchitectureValidation, ReportsTheRuleAtItsLine) {
  const Case& c = GetParam();
  const std::string text = c.mutate(base_architecture_yaml());
  const auto diags = parse_errors(text, "specs/architectures/x.yaml");
  ASSERT_FALSE(diags.ok()) << "no error for:\n" << text;
  bool found = false;
  for (const auto& d : diags.items()) {
    if (d.field != c.field || d.message.find(c.message) == std::string::npos) continue;
    found = true;
    EXPECT_EQ(d.pos.file, "specs/architectures/x.yaml");
    if (std::string(c.line_prefix).size() > 0) {
      EXPECT_EQ(d.pos.line, line_of(text, c.line_prefix)) << d.to_string();
    }
    // The printed form is file:line:col: field: message.
    if (d.pos.line > 0) {
      EXPECT_EQ(d.to_string().rfind("specs/architectures/x.yaml:" + std::to_string(d.pos.line) + ":", 0), 0u);
    }
  }
  EXPECT_TRUE(found) << "expected '" << c.field << ": " << c.message << "', got:\n" << diags.to_string();
}

INSTANTIATE_TEST_SUITE_P(Rules, ArchitectureValidation, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) { return std::string(param_info.param.name); });

TEST(ArchitectureValidation, BaseSpecIsValid) {
  const auto diags = parse_errors(base_architecture_yaml());
  EXPECT_TRUE(diags.ok()) << diags.to_string();
}

TEST(ArchitectureValidation, AllErrorsOfAFileAreReported) {
  std::string t = replace_line(base_architecture_yaml(), "hidden_size:", "hidden_size: big");
  t = replace_line(t, "vocab_size:", "vocab_size: -1");
  t = replace_line(t, "causal:", "casual: true");
  EXPECT_GE(parse_errors(t).items().size(), 3u);
}

TEST(ArchitectureValidation, MessageMatchesTheDocumentedExample) {
  const std::string text = replace_line(base_architecture_yaml(), "num_key_value_heads:", "num_key_value_heads: 5");
  const auto diags = parse_errors(text, "specs/architectures/x.yaml");
  ASSERT_FALSE(diags.ok());
  EXPECT_EQ(diags.items()[0].to_string(),
            "specs/architectures/x.yaml:9:1: num_key_value_heads: 5 does not divide num_attention_heads (32)");
}

}  // namespace
}  // namespace fk::testing
