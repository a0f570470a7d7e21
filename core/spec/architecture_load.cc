#include "core/spec/architecture_load.h"

#include "core/spec/family.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <regex>

namespace fk::spec {
namespace {

const std::vector<std::pair<std::string, NormKind>> kNormKinds = {{"rmsnorm", NormKind::kRmsNorm},
                                                                  {"layernorm", NormKind::kLayerNorm}};
const std::vector<std::pair<std::string, NormPlacement>> kPlacements = {
    {"pre", NormPlacement::kPre},           {"post", NormPlacement::kPost},
    {"sandwich", NormPlacement::kSandwich}, {"parallel", NormPlacement::kParallel},
    {"parallel_shared", NormPlacement::kParallelShared}, {"post_branch", NormPlacement::kPostBranch}};
const std::vector<std::pair<std::string, Activation>> kActivations = {{"silu", Activation::kSilu},
                                                                      {"gelu", Activation::kGelu},
                                                                      {"gelu_tanh", Activation::kGeluTanh},
                                                                      {"relu", Activation::kRelu},
                                                                      {"relu2", Activation::kRelu2}};
const std::vector<std::pair<std::string, PositionKind>> kPositionKinds = {
    {"rope", PositionKind::kRope}, {"learned", PositionKind::kLearned}, {"none", PositionKind::kNone}};
const std::vector<std::pair<std::string, MoeScoring>> kMoeScorings = {{"softmax", MoeScoring::kSoftmax},
                                                                      {"sigmoid", MoeScoring::kSigmoid}};
const std::vector<std::pair<std::string, RopeStyle>> kRopeStyles = {{"neox", RopeStyle::kNeox},
                                                                    {"gptj", RopeStyle::kGptj}};
const std::vector<std::pair<std::string, RopeScalingType>> kRopeScalings = {{"none", RopeScalingType::kNone},
                                                                            {"linear", RopeScalingType::kLinear},
                                                                            {"llama3", RopeScalingType::kLlama3},
                                                                            {"yarn", RopeScalingType::kYarn}};
const std::vector<std::pair<std::string, HeadKind>> kHeadKinds = {{"lm", HeadKind::kLm}, {"none", HeadKind::kNone}};
const std::vector<std::pair<std::string, DType>> kModelDtypes = {
    {"fp32", DType::kF32}, {"fp16", DType::kF16}, {"bf16", DType::kBF16}};

void read_attention(MapReader& r, AttentionSpec& a) {
  r.boolean("causal", a.causal, Need::kOptional);
  r.boolean("qkv_bias", a.qkv_bias, Need::kOptional);
  r.boolean("out_bias", a.out_bias, Need::kOptional);
  r.optional_integer("sliding_window", a.sliding_window, Need::kOptional, limits::kSlidingWindow);
  std::vector<std::string> types;
  if (r.string_list("layer_types", types, Need::kOptional)) {
    std::vector<LayerType> parsed;
    bool ok = true;
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] == "full") {
        parsed.push_back(LayerType::kFull);
      } else if (types[i] == "sliding") {
        parsed.push_back(LayerType::kSliding);
      } else {
        r.ctx().error(r.key_pos("layer_types"), fmt::format("{}[{}]", r.path("layer_types"), i),
                      fmt::format("'{}' is not one of [full, sliding]", types[i]));
        ok = false;
      }
    }
    if (types.empty()) {
      r.ctx().error(r.key_pos("layer_types"), r.path("layer_types"),
                    "the list is empty; list at least one layer type or leave the field out");
      ok = false;
    }
    if (ok) a.layer_types = std::move(parsed);
  }
  r.optional_number("logit_softcap", a.logit_softcap, Need::kOptional, limits::kLogitSoftcap);
  r.boolean("qk_norm", a.qk_norm, Need::kOptional);
  r.boolean("qk_norm_full", a.qk_norm_full, Need::kOptional);
  r.boolean("qk_norm_per_head", a.qk_norm_per_head, Need::kOptional);
  if (bool bias = false; r.boolean("qk_norm_bias", bias, Need::kOptional)) a.qk_norm_bias = bias;
  r.optional_number("query_pre_attn_scalar", a.query_pre_attn_scalar, Need::kOptional, limits::kQueryPreAttnScalar);
  r.optional_number("scale", a.scale, Need::kOptional, limits::kAttentionScale);
  r.boolean("sinks", a.sinks, Need::kOptional);
}

void read_norm(MapReader& r, NormSpec& n) {
  r.choice("kind", n.kind, Need::kRequired, kNormKinds);
  r.number("eps", n.eps, Need::kRequired, limits::kNormEps);
  r.choice("placement", n.placement, Need::kOptional, kPlacements);
  r.number("weight_offset", n.weight_offset, Need::kOptional, limits::kNormWeightOffset);
  r.optional_number("residual_multiplier", n.residual_multiplier, Need::kOptional, limits::kMultiplier);
  r.boolean("bias", n.bias, Need::kOptional);
  r.boolean("weight", n.weight, Need::kOptional);
  r.boolean("first_attention_norm", n.first_attention_norm, Need::kOptional);
}

void read_mlp(MapReader& r, MlpSpec& m) {
  r.choice("activation", m.activation, Need::kRequired, kActivations);
  r.boolean("gated", m.gated, Need::kOptional);
  r.boolean("bias", m.bias, Need::kOptional);
}

void read_rope_scaling(MapReader& r, RopeScaling& s) {
  r.choice("type", s.type, Need::kRequired, kRopeScalings);
  r.number("factor", s.factor, Need::kOptional, limits::kRopeScalingFactor);
  r.number("low_freq_factor", s.low_freq_factor, Need::kOptional, limits::kRopeScalingFactor);
  r.number("high_freq_factor", s.high_freq_factor, Need::kOptional, limits::kRopeScalingFactor);
  r.integer("original_max_position_embeddings", s.original_max_position_embeddings, Need::kOptional,
            limits::kRopeOriginalMaxPositions);
  r.number("beta_fast", s.beta_fast, Need::kOptional, limits::kYarnBeta);
  r.number("beta_slow", s.beta_slow, Need::kOptional, limits::kYarnBeta);
  r.number("mscale", s.mscale, Need::kOptional, limits::kYarnMscale);
  r.number("mscale_all_dim", s.mscale_all_dim, Need::kOptional, limits::kYarnMscale);
  r.optional_number("attention_factor", s.attention_factor, Need::kOptional, limits::kRopeAttentionFactor);
  r.boolean("truncate", s.truncate, Need::kOptional);
}

void read_position(MapReader& r, PositionSpec& p) {
  r.choice("kind", p.kind, Need::kRequired, kPositionKinds);
  r.number("rope_theta", p.rope_theta, Need::kOptional, limits::kRopeTheta);
  r.optional_number("local_rope_theta", p.local_rope_theta, Need::kOptional, limits::kRopeTheta);
  r.choice("rope_style", p.rope_style, Need::kOptional, kRopeStyles);
  r.number("partial_rotary_factor", p.partial_rotary_factor, Need::kOptional, limits::kPartialRotaryFactor);
  std::vector<std::string> kinds;
  if (r.string_list("rope_layers", kinds, Need::kOptional)) {
    std::vector<bool> parsed;
    bool ok = !kinds.empty();
    if (kinds.empty())
      r.ctx().error(r.key_pos("rope_layers"), r.path("rope_layers"),
                    "the list is empty; list at least one layer (rope or nope) or leave the field out");
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] != "rope" && kinds[i] != "nope") {
        r.ctx().error(r.key_pos("rope_layers"), fmt::format("{}[{}]", r.path("rope_layers"), i),
                      fmt::format("'{}' is not one of [rope, nope]", kinds[i]));
        ok = false;
      }
      parsed.push_back(kinds[i] == "rope");
    }
    if (ok) p.rope_layers = std::move(parsed);
  }
  YAML::Node scaling = r.child("rope_scaling");
  if (scaling.IsDefined()) {
    if (scaling.IsNull()) {
      p.rope_scaling = RopeScaling{};
    } else {
      MapReader s(r.ctx(), scaling, r.path("rope_scaling"), r.overlay());
      read_rope_scaling(s, p.rope_scaling);
      s.finish();
    }
  }
}

void read_embedding(MapReader& r, EmbeddingSpec& e) {
  r.boolean("tied", e.tied, Need::kOptional);
  r.boolean("scale_by_sqrt_hidden", e.scale_by_sqrt_hidden, Need::kOptional);
  r.optional_number("multiplier", e.multiplier, Need::kOptional, limits::kMultiplier);
  r.integer("type_vocab_size", e.type_vocab_size, Need::kOptional, limits::kTypeVocabSize);
  r.boolean("norm", e.norm, Need::kOptional);
}

void read_head(MapReader& r, HeadSpec& h) {
  r.choice("kind", h.kind, Need::kOptional, kHeadKinds);
  r.boolean("final_norm", h.final_norm, Need::kOptional);
  r.boolean("bias", h.bias, Need::kOptional);
  r.optional_number("logit_scale", h.logit_scale, Need::kOptional, limits::kLogitScale);
  r.optional_number("logit_softcap", h.logit_softcap, Need::kOptional, limits::kLogitSoftcap);
}

void read_moe(MapReader& r, MoeSpec& m) {
  r.integer("num_experts", m.num_experts, Need::kRequired, limits::kNumExperts);
  r.integer("experts_per_token", m.experts_per_token, Need::kRequired, limits::kExpertsPerToken);
  r.integer("moe_intermediate_size", m.moe_intermediate_size, Need::kRequired, limits::kMoeIntermediateSize);
  r.boolean("renormalize", m.renormalize, Need::kOptional);
  r.integer("shared_experts", m.shared_experts, Need::kOptional, limits::kSharedExperts);
  r.integer("shared_intermediate_size", m.shared_intermediate_size, Need::kOptional, limits::kSharedIntermediateSize);
  r.boolean("shared_expert_gate", m.shared_expert_gate, Need::kOptional);
  r.integer("first_dense_layers", m.first_dense_layers, Need::kOptional, limits::kFirstDenseLayers);
  r.integer_list("dense_layers", m.dense_layers, Need::kOptional, limits::kDenseLayer);
  r.boolean("router_bias", m.router_bias, Need::kOptional);
  r.boolean("expert_bias", m.expert_bias, Need::kOptional);
  r.optional_number("swiglu_limit", m.swiglu_limit, Need::kOptional, limits::kSwigluLimit);
  r.number("swiglu_alpha", m.swiglu_alpha, Need::kOptional, limits::kSwigluAlpha);
  r.choice("scoring", m.scoring, Need::kOptional, kMoeScorings);
  r.integer("n_group", m.n_group, Need::kOptional, limits::kExpertGroups);
  r.integer("topk_group", m.topk_group, Need::kOptional, limits::kExpertGroups);
  r.boolean("score_correction_bias", m.score_correction_bias, Need::kOptional);
  r.number("routed_scaling_factor", m.routed_scaling_factor, Need::kOptional, limits::kRoutedScalingFactor);
}

template <typename Fn>
void read_section(MapReader& r, const std::string& key, Need need, Fn&& fn) {
  YAML::Node node = r.child(key);
  if (!node.IsDefined()) {
    if (need == Need::kRequired && !r.overlay())
      r.ctx().error(r.pos(), r.path(key), "required section is missing");
    return;
  }
  MapReader s(r.ctx(), node, r.path(key), r.overlay());
  if (!s.valid()) return;
  fn(s);
  s.finish();
}

// Reads every model field present in `r` into `a`: the common ones, then those of
// a's model family (FamilyRules::fields; every field when the family is unknown, which
// architecture_validate reports). A field the family does not take is an error naming
// it. In overlay mode only the fields written are changed.
void read_model_fields(MapReader& r, Architecture& a, bool& head_dim_given, bool& kv_given) {
  const Need req = Need::kRequired;
  r.string("model_type", a.model_type, req);
  r.string("hf_id", a.hf_id, Need::kOptional);
  r.string("family", a.family, Need::kOptional);
  r.string("model_family", a.model_family, Need::kOptional);
  r.string("source", a.source, req);
  r.choice("dtype", a.dtype, Need::kOptional, kModelDtypes);
  r.integer("hidden_size", a.hidden_size, req, limits::kHiddenSize);
  r.integer("num_hidden_layers", a.num_hidden_layers, req, limits::kNumHiddenLayers);
  register_builtin_families();
  const FamilyRules* family = FamilyRegistry::global().find(a.model_family);
  // An architecture with a section that takes no token ids (vision:) has no vocabulary.
  bool no_vocabulary = false;
  if (family != nullptr)
    for (const auto& section : family->sections) no_vocabulary |= section.no_vocabulary && r.has(section.key);
  r.integer("vocab_size", a.vocab_size, no_vocabulary ? Need::kOptional : req,
            no_vocabulary ? IntRange{0, limits::kVocabSize.max} : limits::kVocabSize);
  read_section(r, "norm", req, [&](MapReader& s) { read_norm(s, a.norm); });
  read_section(r, "embedding", Need::kOptional, [&](MapReader& s) { read_embedding(s, a.embedding); });
  read_section(r, "head", Need::kOptional, [&](MapReader& s) { read_head(s, a.head); });

  // nullopt: the family does not take the field.
  auto need = [&](const std::string& key) -> std::optional<Need> {
    if (family == nullptr) return Need::kOptional;
    for (const auto& f : family->fields)
      if (f.key == key) return f.required ? Need::kRequired : Need::kOptional;
    if (const SectionCodec* s = family_section(*family, key)) return s->required ? Need::kRequired : Need::kOptional;
    if (r.has(key))
      r.ctx().error(r.key_pos(key), r.path(key),
                    fmt::format("does not apply to model_family '{}' ({})", a.model_family, family->summary));
    return std::nullopt;
  };
  if (auto n = need("num_attention_heads")) r.integer("num_attention_heads", a.num_attention_heads, *n, limits::kHeads);
  if (auto n = need("num_key_value_heads"))
    if (r.integer("num_key_value_heads", a.num_key_value_heads, *n, limits::kHeads)) kv_given = true;
  if (auto n = need("head_dim"))
    if (r.integer("head_dim", a.head_dim, *n, limits::kHeads)) head_dim_given = true;
  if (auto n = need("intermediate_size")) r.integer("intermediate_size", a.intermediate_size, *n, limits::kIntermediateSize);
  if (auto n = need("max_position_embeddings"))
    r.integer("max_position_embeddings", a.max_position_embeddings, *n, limits::kMaxPositionEmbeddings);
  if (auto n = need("attention")) read_section(r, "attention", *n, [&](MapReader& s) { read_attention(s, a.attention); });
  if (auto n = need("mlp")) read_section(r, "mlp", *n, [&](MapReader& s) { read_mlp(s, a.mlp); });
  if (auto n = need("position")) read_section(r, "position", *n, [&](MapReader& s) { read_position(s, a.position); });
  if (auto n = need("moe")) read_section(r, "moe", *n, [&](MapReader& s) { read_moe(s, a.moe); });
  // The sections of other families: "does not apply" when present (an unknown family
  // is reported by architecture_validate, not key by key).
  for (const auto& name : FamilyRegistry::global().names())
    for (const auto& other : FamilyRegistry::global().rules(name).sections) {
      if (family == nullptr)
        r.has(other.key);
      else if (family_section(*family, other.key) == nullptr)
        need(other.key);
    }
  if (family != nullptr)
    for (const auto& section : family->sections)
      if (auto n = need(section.key))
        read_section(r, section.key, *n, [&](MapReader& m) { section.read(m, a); });
}

// `checkpoint:` (top level only: presets change sizes, so they never use it). A
// relative path is resolved against the spec file's folder; the result is absolute.
// Existence is not checked here: specs are validated on machines without the weights.
void read_checkpoint(MapReader& r, const std::string& file, Architecture& a) {
  YAML::Node node = r.child("checkpoint");
  if (!node.IsDefined() || node.IsNull()) return;
  std::string path;
  if (!r.string("checkpoint", path, Need::kOptional)) return;
  if (path.empty()) {
    r.ctx().error(r.key_pos("checkpoint"), "checkpoint",
                  "found an empty path, expected a .safetensors file or a checkpoint folder (or leave the field out)");
    return;
  }
  namespace fs = std::filesystem;
  fs::path p(path);
  if (p.is_relative()) {
    fs::path folder = fs::path(file).parent_path();
    if (folder.empty()) folder = ".";
    std::error_code ec;
    const fs::path base = fs::absolute(folder, ec);
    p = (ec ? folder : base) / p;
  }
  a.checkpoint = p.lexically_normal().string();
}

// Fills defaults that depend on other fields (kv heads, head_dim).
void resolve_defaults(Architecture& a, bool head_dim_given, bool kv_given, const ParseContext& ctx) {
  if (!kv_given && a.num_key_value_heads == 0) a.num_key_value_heads = a.num_attention_heads;
  if (!head_dim_given && a.head_dim == 0 && a.num_attention_heads > 0) {
    if (a.hidden_size % a.num_attention_heads != 0) {
      ctx.error(ctx.where->at("num_attention_heads"), "head_dim",
                fmt::format("head_dim is missing and hidden_size ({}) is not divisible by "
                            "num_attention_heads ({}); give head_dim explicitly",
                            a.hidden_size, a.num_attention_heads));
    } else {
      a.head_dim = a.hidden_size / a.num_attention_heads;
    }
  }
}

std::vector<std::string> structure_signature(const Architecture& a) {
  std::vector<std::string> s;
  auto add = [&](std::string field, std::string value) { s.push_back(field + "=" + value); };
  add("attention kind", a.attention_kind());
  add("attention.causal", a.attention.causal ? "true" : "false");
  add("attention.qkv_bias", a.attention.qkv_bias ? "true" : "false");
  add("attention.out_bias", a.attention.out_bias ? "true" : "false");
  add("attention.sinks", a.attention.sinks ? "true" : "false");
  add("attention.qk_norm", a.attention.qk_norm ? "true" : "false");
  add("attention.qk_norm_full", a.attention.qk_norm_full ? "true" : "false");
  add("attention.qk_norm_per_head", a.attention.qk_norm_per_head ? "true" : "false");
  add("attention.qk_norm_bias", a.qk_norm_has_bias() ? "true" : "false");
  add("attention.logit_softcap", a.attention.logit_softcap ? "set" : "unset");
  add("attention.sliding_window", a.attention.sliding_window ? "set" : "unset");
  add("attention.scale", a.attention.scale ? "set" : "unset");
  add("norm.residual_multiplier", a.norm.residual_multiplier ? "set" : "unset");
  add("embedding.multiplier", a.embedding.multiplier ? "set" : "unset");
  std::vector<std::string> types;
  for (auto t : a.attention.layer_types) types.emplace_back(layer_type_name(t));
  add("attention.layer_types", fmt::format("[{}]", fmt::join(types, ", ")));
  add("norm.kind", std::string(norm_kind_name(a.norm.kind)));
  add("norm.placement", std::string(norm_placement_name(a.norm.placement)));
  add("norm.bias", a.norm.bias ? "true" : "false");
  add("norm.weight", a.norm.weight ? "true" : "false");
  add("norm.first_attention_norm", a.norm.first_attention_norm ? "true" : "false");
  add("mlp.activation", std::string(activation_name(a.mlp.activation)));
  add("mlp.gated", a.mlp.gated ? "true" : "false");
  add("mlp.bias", a.mlp.bias ? "true" : "false");
  add("position.kind", std::string(position_kind_name(a.position.kind)));
  add("position.rope_style", std::string(rope_style_name(a.position.rope_style)));
  add("position.rope_layers", rope_layers_text(a.position.rope_layers));
  add("position.rope_scaling.type", std::string(rope_scaling_name(a.position.rope_scaling.type)));
  add("embedding.tied", a.embedding.tied ? "true" : "false");
  add("embedding.scale_by_sqrt_hidden", a.embedding.scale_by_sqrt_hidden ? "true" : "false");
  add("embedding.norm", a.embedding.norm ? "true" : "false");
  add("head.kind", std::string(head_kind_name(a.head.kind)));
  add("head.final_norm", a.head.final_norm ? "true" : "false");
  add("head.bias", a.head.bias ? "true" : "false");
  add("head.logit_scale", a.head.logit_scale ? "set" : "unset");
  add("head.logit_softcap", a.head.logit_softcap ? "set" : "unset");
  add("moe", a.moe.enabled() ? "enabled" : "disabled");
  add("moe.experts_per_token", fmt::format("{}", a.moe.experts_per_token));
  add("moe.shared_experts", fmt::format("{}", a.moe.shared_experts));
  add("moe.shared_expert_gate", a.moe.shared_expert_gate ? "true" : "false");
  add("moe.renormalize", a.moe.renormalize ? "true" : "false");
  add("moe.first_dense_layers", a.moe.first_dense_layers > 0 ? "some" : "none");
  add("moe.dense_layers", a.moe.dense_layers.empty() ? "none" : "some");
  add("moe.router_bias", a.moe.router_bias ? "true" : "false");
  add("moe.expert_bias", a.moe.expert_bias ? "true" : "false");
  add("moe.swiglu_limit", a.moe.swiglu_limit ? "set" : "unset");
  add("moe.scoring", std::string(moe_scoring_name(a.moe.scoring)));
  add("moe.grouped", a.moe.n_group > 1 ? "true" : "false");
  add("moe.score_correction_bias", a.moe.score_correction_bias ? "true" : "false");
  if (const FamilyRules* family = FamilyRegistry::global().find(a.model_family))
    for (const auto& section : family->sections)
      if (a.sections.has(section.key))
        for (auto& entry : section.structure(a)) s.push_back(std::move(entry));
  return s;
}

// Every value against its limit (core/spec/limits.h) and the dtype against the model
// dtypes: what the YAML reader checks field by field, for values from any source.
// Optional fields count when set; moe fields when the model is MoE; 0 in
// original_max_position_embeddings and shared_intermediate_size means unset.
bool check_limits(const Architecture& a, const FamilyRules& family, const ParseContext& ctx) {
  namespace L = limits;
  bool ok = true;
  // Fields of sections the family does not take keep their defaults and are not checked.
  auto in = [&](const std::string& field, auto value, auto range) {
    if (family_takes(family, field.substr(0, field.find('.')))) ok &= ctx.check_range(field, value, range);
  };
  if (std::none_of(kModelDtypes.begin(), kModelDtypes.end(), [&](const auto& d) { return d.second == a.dtype; })) {
    ctx.error(ctx.where->at("dtype"), "dtype",
              fmt::format("'{}' is not one of [fp32, fp16, bf16]", dtype_name(a.dtype)));
    ok = false;
  }
  in("hidden_size", a.hidden_size, L::kHiddenSize);
  in("num_hidden_layers", a.num_hidden_layers, L::kNumHiddenLayers);
  in("num_attention_heads", a.num_attention_heads, L::kHeads);
  in("num_key_value_heads", a.num_key_value_heads, L::kHeads);
  in("head_dim", a.head_dim, L::kHeads);
  in("intermediate_size", a.intermediate_size, L::kIntermediateSize);
  if (architecture_has_no_vocabulary(a)) {
    if (a.vocab_size != 0) {
      ctx.error(ctx.where->at("vocab_size"), "vocab_size",
                fmt::format("{} does not apply: {} takes no token ids (its {} section)", a.vocab_size,
                            a.name.empty() ? "the model" : a.name, fmt::join(a.sections.keys(), ", ")));
      ok = false;
    }
  } else {
    in("vocab_size", a.vocab_size, L::kVocabSize);
  }
  in("max_position_embeddings", a.max_position_embeddings, L::kMaxPositionEmbeddings);
  const AttentionSpec& at = a.attention;
  if (at.sliding_window) in("attention.sliding_window", *at.sliding_window, L::kSlidingWindow);
  if (at.logit_softcap) in("attention.logit_softcap", *at.logit_softcap, L::kLogitSoftcap);
  if (at.query_pre_attn_scalar) in("attention.query_pre_attn_scalar", *at.query_pre_attn_scalar, L::kQueryPreAttnScalar);
  if (at.scale) in("attention.scale", *at.scale, L::kAttentionScale);
  if (a.norm.residual_multiplier) in("norm.residual_multiplier", *a.norm.residual_multiplier, L::kMultiplier);
  if (a.embedding.multiplier) in("embedding.multiplier", *a.embedding.multiplier, L::kMultiplier);
  in("norm.eps", a.norm.eps, L::kNormEps);
  in("norm.weight_offset", a.norm.weight_offset, L::kNormWeightOffset);
  const PositionSpec& p = a.position;
  in("position.rope_theta", p.rope_theta, L::kRopeTheta);
  if (p.local_rope_theta) in("position.local_rope_theta", *p.local_rope_theta, L::kRopeTheta);
  in("position.partial_rotary_factor", p.partial_rotary_factor, L::kPartialRotaryFactor);
  in("position.rope_scaling.factor", p.rope_scaling.factor, L::kRopeScalingFactor);
  in("position.rope_scaling.low_freq_factor", p.rope_scaling.low_freq_factor, L::kRopeScalingFactor);
  in("position.rope_scaling.high_freq_factor", p.rope_scaling.high_freq_factor, L::kRopeScalingFactor);
  if (p.rope_scaling.original_max_position_embeddings != 0)
    in("position.rope_scaling.original_max_position_embeddings", p.rope_scaling.original_max_position_embeddings,
       L::kRopeOriginalMaxPositions);
  in("position.rope_scaling.beta_fast", p.rope_scaling.beta_fast, L::kYarnBeta);
  in("position.rope_scaling.beta_slow", p.rope_scaling.beta_slow, L::kYarnBeta);
  in("position.rope_scaling.mscale", p.rope_scaling.mscale, L::kYarnMscale);
  in("position.rope_scaling.mscale_all_dim", p.rope_scaling.mscale_all_dim, L::kYarnMscale);
  if (p.rope_scaling.attention_factor)
    in("position.rope_scaling.attention_factor", *p.rope_scaling.attention_factor, L::kRopeAttentionFactor);
  in("embedding.type_vocab_size", a.embedding.type_vocab_size, L::kTypeVocabSize);
  if (a.head.logit_softcap) in("head.logit_softcap", *a.head.logit_softcap, L::kLogitSoftcap);
  if (a.head.logit_scale) in("head.logit_scale", *a.head.logit_scale, L::kLogitScale);
  const MoeSpec& m = a.moe;
  if (m.enabled()) {
    in("moe.num_experts", m.num_experts, L::kNumExperts);
    in("moe.experts_per_token", m.experts_per_token, L::kExpertsPerToken);
    in("moe.moe_intermediate_size", m.moe_intermediate_size, L::kMoeIntermediateSize);
    in("moe.shared_experts", m.shared_experts, L::kSharedExperts);
    if (m.shared_intermediate_size != 0)
      in("moe.shared_intermediate_size", m.shared_intermediate_size, L::kSharedIntermediateSize);
    in("moe.first_dense_layers", m.first_dense_layers, L::kFirstDenseLayers);
    for (size_t i = 0; i < m.dense_layers.size(); ++i)
      in(fmt::format("moe.dense_layers[{}]", i), m.dense_layers[i], L::kDenseLayer);
    in("moe.n_group", m.n_group, L::kExpertGroups);
    in("moe.topk_group", m.topk_group, L::kExpertGroups);
    in("moe.routed_scaling_factor", m.routed_scaling_factor, L::kRoutedScalingFactor);
  }
  for (const auto& key : a.sections.keys()) {
    const SectionCodec* section = family_section(family, key);
    if (section == nullptr) {
      ctx.error(ctx.where->at(key), key, fmt::format("does not apply to model_family '{}'", a.model_family));
      ok = false;
    } else {
      ok &= section->check_limits(a, ctx);
    }
  }
  for (const auto& section : family.sections)
    if (section.required && !a.sections.has(section.key)) {
      ctx.error(ctx.where->at(section.key), section.key,
                fmt::format("required section is missing (model_family '{}')", a.model_family));
      ok = false;
    }
  return ok;
}

}  // namespace

void architecture_validate(const Architecture& a, const ParseContext& ctx) {
  const SourceMap& w = *ctx.where;
  auto err = [&](const std::string& field, std::string msg) { ctx.error(w.at(field), field, std::move(msg)); };
  register_builtin_families();
  const FamilyRules* family = FamilyRegistry::global().find(a.model_family);
  if (family == nullptr) {
    err("model_family", fmt::format("'{}' is not a model family (known: {})", a.model_family,
                                    fmt::join(FamilyRegistry::global().names(), ", ")));
    return;  // what else to check is the family's
  }
  // The checks below loop over layers and divide by sizes: only within the limits.
  if (!check_limits(a, *family, ctx)) return;
  if (!a.norm.bias && a.norm.kind != NormKind::kLayerNorm)
    err("norm.bias", "applies only to norm.kind layernorm (RMSNorm has no bias)");
  if (!a.norm.weight && a.norm.weight_offset != 0.0)
    err("norm.weight", "false (no learned weight) leaves nothing for norm.weight_offset to offset: set it to 0");
  if (!a.norm.first_attention_norm && (a.norm.placement != NormPlacement::kPre || a.norm.kind != NormKind::kLayerNorm))
    err("norm.first_attention_norm",
        fmt::format("false applies only to norm.kind layernorm with norm.placement pre (found {} {})",
                    norm_kind_name(a.norm.kind), norm_placement_name(a.norm.placement)));
  if (a.head.kind == HeadKind::kNone) {
    if (a.embedding.tied) err("embedding.tied", "tied embeddings need an LM head (head.kind lm)");
    if (a.head.logit_softcap) err("head.logit_softcap", "applies only to head.kind lm");
    if (a.head.logit_scale) err("head.logit_scale", "applies only to head.kind lm");
    if (a.head.bias) err("head.bias", "applies only to head.kind lm");
  }
  if (family->validate != nullptr) family->validate(a, ctx);
}

void architecture_validate_preset(const Architecture& full, const Architecture& p, const ParseContext& ctx) {
  const SourceMap& w = *ctx.where;
  auto err = [&](const std::string& field, std::string msg) { ctx.error(w.at(field), field, std::move(msg)); };
  if (full.num_key_value_heads > 0 && p.num_key_value_heads > 0 &&
      full.attention_kind() == p.attention_kind() && full.attention_kind() == "GQA" &&
      full.num_attention_heads / full.num_key_value_heads != p.num_attention_heads / p.num_key_value_heads) {
    err("num_key_value_heads",
        fmt::format("changes the GQA ratio: {}/{} = {} in the full model, {}/{} = {} here",
                    full.num_attention_heads, full.num_key_value_heads,
                    full.num_attention_heads / full.num_key_value_heads, p.num_attention_heads,
                    p.num_key_value_heads, p.num_attention_heads / p.num_key_value_heads));
  }
  const bool full_rel = full.head_dim * full.num_attention_heads == full.hidden_size;
  const bool p_rel = p.head_dim * p.num_attention_heads == p.hidden_size;
  if (full_rel != p_rel) {
    err("head_dim", fmt::format("breaks the head_dim relation of the full model: head_dim x num_attention_heads "
                                "{} hidden_size there ({} x {} vs {}), {} here ({} x {} vs {})",
                                full_rel ? "equals" : "differs from", full.head_dim, full.num_attention_heads,
                                full.hidden_size, p_rel ? "equals" : "differs from", p.head_dim,
                                p.num_attention_heads, p.hidden_size));
  }
  if (!full.attention.layer_types.empty() &&
      p.num_hidden_layers < static_cast<int64_t>(full.attention.layer_types.size()))
    err("num_hidden_layers", fmt::format("{} layers cannot hold one full period of the layer pattern ({} layers)",
                                         p.num_hidden_layers, full.attention.layer_types.size()));
  if (p.num_hidden_layers < static_cast<int64_t>(full.position.rope_layers.size()))
    err("num_hidden_layers", fmt::format("{} layers cannot hold one full period of position.rope_layers ({} layers)",
                                         p.num_hidden_layers, full.position.rope_layers.size()));
  const auto a = structure_signature(full);
  const auto b = structure_signature(p);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] == b[i]) continue;
    const auto eq = a[i].find('=');
    const std::string field = a[i].substr(0, eq);
    err(field.find(' ') == std::string::npos ? field : "num_key_value_heads",
        fmt::format("changes the structure of the full model ({} -> {}); a preset may change sizes only",
                    a[i].substr(eq + 1), b[i].substr(b[i].find('=') + 1)));
  }
}

std::optional<ArchitectureDoc> architecture_parse(const YAML::Node& root, const std::string& file,
                                                  Diagnostics& diags) {
  const size_t errors_before = diags.items().size();
  ArchitectureDoc doc;
  doc.file = file;
  doc.where = SourceMap(file);
  ParseContext ctx{file, &diags, &doc.where, ""};
  MapReader r(ctx, root, "");
  if (!r.valid()) return std::nullopt;

  std::string kind;
  if (r.string("kind", kind, Need::kRequired) && kind != "architecture")
    ctx.error(r.key_pos("kind"), "kind", fmt::format("'{}' where an architecture file was expected", kind));
  if (r.string("name", doc.full.name, Need::kRequired) &&
      !std::regex_match(doc.full.name, std::regex("[A-Za-z0-9][A-Za-z0-9._-]*")))
    ctx.error(r.key_pos("name"), "name",
              fmt::format("'{}' must start with a letter or digit and hold only letters, digits, '.', '_', '-'",
                          doc.full.name));
  bool head_dim_given = false, kv_given = false;
  read_model_fields(r, doc.full, head_dim_given, kv_given);
  read_checkpoint(r, file, doc.full);
  YAML::Node presets = r.child("presets");
  r.finish();
  resolve_defaults(doc.full, head_dim_given, kv_given, ctx);
  const bool base_ok = diags.items().size() == errors_before;
  if (base_ok) architecture_validate(doc.full, ctx);

  if (presets.IsDefined()) {
    MapReader pr(ctx, presets, "presets");
    if (pr.valid()) {
      for (auto it = presets.begin(); it != presets.end(); ++it) {
        if (!it->first.IsScalar()) continue;
        const std::string pname = it->first.Scalar();
        pr.has(pname);
        if (pname == "full") {
          ctx.error(ctx.pos_of(it->first), "presets.full", "'full' names the published values; pick another name");
          continue;
        }
        Architecture p = doc.full;
        p.preset = pname;
        p.checkpoint.clear();
        SourceMap pw = doc.where;
        ParseContext pctx{file, &diags, &pw, "presets." + pname};
        const size_t before = diags.items().size();
        MapReader o(pctx, it->second, "", true);
        if (!o.valid()) continue;
        bool hd = head_dim_given, kv = kv_given;
        read_model_fields(o, p, hd, kv);
        o.finish();
        for (const char* identity : {"model_type", "hf_id", "family", "model_family", "source"})
          if (o.has(identity))
            pctx.error(o.key_pos(identity), identity, "identifies the model and cannot be changed by a preset");
        // Presets of an invalid full model are read (unknown keys, types) but not
        // validated: their errors would only echo the full model's.
        if (diags.items().size() != before || !base_ok) continue;
        architecture_validate(p, pctx);
        architecture_validate_preset(doc.full, p, pctx);
        doc.presets.emplace(pname, std::move(p));
        doc.preset_where.emplace(pname, std::move(pw));
      }
    }
  }
  if (diags.items().size() != errors_before) return std::nullopt;
  return doc;
}

}  // namespace fk::spec
