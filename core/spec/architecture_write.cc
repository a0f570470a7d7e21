#include "core/spec/architecture_write.h"

#include "core/spec/family.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace fk::spec {
namespace {

using YAML::BeginMap;
using YAML::BeginSeq;
using YAML::EndMap;
using YAML::EndSeq;
using YAML::Flow;
using YAML::Key;
using YAML::Value;

void kv(YAML::Emitter& e, const char* key, const std::string& v) { e << Key << key << Value << v; }
void kv(YAML::Emitter& e, const char* key, std::string_view v) { kv(e, key, std::string(v)); }
void kv(YAML::Emitter& e, const char* key, const char* v) { kv(e, key, std::string(v)); }
void kv(YAML::Emitter& e, const char* key, bool v) { e << Key << key << Value << v; }
void kv(YAML::Emitter& e, const char* key, int64_t v) { e << Key << key << Value << static_cast<long long>(v); }
void kv_float(YAML::Emitter& e, const char* key, double v) { e << Key << key << Value << yaml_float_text(v); }
void kv_float(YAML::Emitter& e, const char* key, const std::optional<double>& v) {
  if (v) {
    kv_float(e, key, *v);
  } else {
    e << Key << key << Value << YAML::Null;
  }
}

void write_attention(YAML::Emitter& e, const AttentionSpec& at) {
  e << Key << "attention" << Value << BeginMap;
  kv(e, "causal", at.causal);
  kv(e, "qkv_bias", at.qkv_bias);
  kv(e, "out_bias", at.out_bias);
  if (at.sinks) kv(e, "sinks", true);
  if (at.sliding_window) {
    kv(e, "sliding_window", *at.sliding_window);
  } else {
    e << Key << "sliding_window" << Value << YAML::Null;
  }
  // The loader rejects an empty list; an empty pattern means its default.
  if (!at.layer_types.empty()) {
    e << Key << "layer_types" << Value << Flow << BeginSeq;
    for (auto t : at.layer_types) e << std::string(layer_type_name(t));
    e << EndSeq;
  }
  kv_float(e, "logit_softcap", at.logit_softcap);
  kv(e, "qk_norm", at.qk_norm);
  if (at.qk_norm_full) kv(e, "qk_norm_full", true);
  if (at.qk_norm_per_head) kv(e, "qk_norm_per_head", true);
  if (at.qk_norm_bias) kv(e, "qk_norm_bias", *at.qk_norm_bias);
  kv_float(e, "query_pre_attn_scalar", at.query_pre_attn_scalar);
  if (at.scale) kv_float(e, "scale", *at.scale);
  e << EndMap;
}

void write_position(YAML::Emitter& e, const PositionSpec& p) {
  e << Key << "position" << Value << BeginMap;
  kv(e, "kind", position_kind_name(p.kind));
  if (p.kind == PositionKind::kRope) {
    kv_float(e, "rope_theta", p.rope_theta);
    kv_float(e, "local_rope_theta", p.local_rope_theta);
    kv(e, "rope_style", rope_style_name(p.rope_style));
    kv_float(e, "partial_rotary_factor", p.partial_rotary_factor);
    if (!p.rope_layers.empty()) {
      e << Key << "rope_layers" << Value << Flow << BeginSeq;
      for (bool rope : p.rope_layers) e << std::string(rope ? "rope" : "nope");
      e << EndSeq;
    }
    const RopeScaling& s = p.rope_scaling;
    e << Key << "rope_scaling" << Value;
    if (s.type == RopeScalingType::kNone) {
      e << YAML::Null;
    } else {
      e << Flow << BeginMap;
      kv(e, "type", rope_scaling_name(s.type));
      kv_float(e, "factor", s.factor);
      if (s.type == RopeScalingType::kLlama3) {
        kv_float(e, "low_freq_factor", s.low_freq_factor);
        kv_float(e, "high_freq_factor", s.high_freq_factor);
        kv(e, "original_max_position_embeddings", s.original_max_position_embeddings);
      } else if (s.type == RopeScalingType::kYarn) {
        kv(e, "original_max_position_embeddings", s.original_max_position_embeddings);
        kv_float(e, "beta_fast", s.beta_fast);
        kv_float(e, "beta_slow", s.beta_slow);
        if (s.mscale != 0.0) kv_float(e, "mscale", s.mscale);
        if (s.mscale_all_dim != 0.0) kv_float(e, "mscale_all_dim", s.mscale_all_dim);
        if (s.attention_factor) kv_float(e, "attention_factor", *s.attention_factor);
        if (!s.truncate) kv(e, "truncate", false);
      }
      e << EndMap;
    }
  }
  e << EndMap;
}

void write_moe(YAML::Emitter& e, const MoeSpec& m) {
  if (!m.enabled()) return;
  e << Key << "moe" << Value << BeginMap;
  kv(e, "num_experts", m.num_experts);
  kv(e, "experts_per_token", m.experts_per_token);
  kv(e, "moe_intermediate_size", m.moe_intermediate_size);
  kv(e, "renormalize", m.renormalize);
  kv(e, "shared_experts", m.shared_experts);
  if (m.shared_experts > 0) kv(e, "shared_intermediate_size", m.shared_intermediate_size);
  if (m.shared_expert_gate) kv(e, "shared_expert_gate", true);
  kv(e, "first_dense_layers", m.first_dense_layers);
  e << Key << "dense_layers" << Value << Flow << BeginSeq;
  for (int64_t l : m.dense_layers) e << static_cast<long long>(l);
  e << EndSeq;
  if (m.router_bias) kv(e, "router_bias", true);
  if (m.expert_bias) kv(e, "expert_bias", true);
  if (m.swiglu_limit) {
    kv_float(e, "swiglu_limit", *m.swiglu_limit);
    kv_float(e, "swiglu_alpha", m.swiglu_alpha);
  }
  if (m.grouped_routing()) {  // written only then: other MoE specs and their job ids stay as they were
    kv(e, "scoring", std::string(moe_scoring_name(m.scoring)));
    kv(e, "n_group", m.n_group);
    kv(e, "topk_group", m.topk_group);
    kv(e, "score_correction_bias", m.score_correction_bias);
    kv_float(e, "routed_scaling_factor", m.routed_scaling_factor);
  }
  e << EndMap;
}

}  // namespace

std::string yaml_float_text(double v) {
  std::string s = fmt::format("{}", v);
  const auto e = s.find_first_of("eE");
  if (s.find('.') == std::string::npos) {
    if (e == std::string::npos) {
      s += ".0";
    } else {
      s.insert(e, ".0");
    }
  }
  return s;
}

std::string architecture_to_yaml(const Architecture& a, const std::vector<std::string>& header) {
  YAML::Emitter e;
  e.SetNullFormat(YAML::LowerNull);
  e << BeginMap;
  kv(e, "kind", "architecture");
  kv(e, "name", a.name);
  kv(e, "model_type", a.model_type);
  kv(e, "hf_id", a.hf_id);
  kv(e, "family", a.family);
  kv(e, "model_family", a.model_family);
  kv(e, "source", a.source);
  if (!a.checkpoint.empty()) kv(e, "checkpoint", a.checkpoint);
  kv(e, "dtype", dtype_name(a.dtype));
  register_builtin_families();
  const FamilyRules* family = FamilyRegistry::global().find(a.model_family);
  // The fields a's family takes (all of them for a family this program lacks).
  auto takes = [&](const char* key) { return family == nullptr || family_takes(*family, key); };
  kv(e, "hidden_size", a.hidden_size);
  kv(e, "num_hidden_layers", a.num_hidden_layers);
  if (takes("num_attention_heads")) kv(e, "num_attention_heads", a.num_attention_heads);
  if (takes("num_key_value_heads")) kv(e, "num_key_value_heads", a.num_key_value_heads);
  if (takes("head_dim")) kv(e, "head_dim", a.head_dim);
  if (takes("intermediate_size")) kv(e, "intermediate_size", a.intermediate_size);
  if (!architecture_has_no_vocabulary(a)) kv(e, "vocab_size", a.vocab_size);
  if (takes("max_position_embeddings")) kv(e, "max_position_embeddings", a.max_position_embeddings);
  if (takes("attention")) write_attention(e, a.attention);
  e << Key << "norm" << Value << Flow << BeginMap;
  kv(e, "kind", norm_kind_name(a.norm.kind));
  kv_float(e, "eps", a.norm.eps);
  kv(e, "placement", norm_placement_name(a.norm.placement));
  kv_float(e, "weight_offset", a.norm.weight_offset);
  if (a.norm.residual_multiplier) kv_float(e, "residual_multiplier", *a.norm.residual_multiplier);
  if (!a.norm.bias) kv(e, "bias", false);
  if (!a.norm.weight) kv(e, "weight", false);
  if (!a.norm.first_attention_norm) kv(e, "first_attention_norm", false);
  e << EndMap;
  if (takes("mlp")) {
    e << Key << "mlp" << Value << Flow << BeginMap;
    kv(e, "activation", activation_name(a.mlp.activation));
    kv(e, "gated", a.mlp.gated);
    kv(e, "bias", a.mlp.bias);
    e << EndMap;
  }
  if (takes("position")) write_position(e, a.position);
  e << Key << "embedding" << Value << Flow << BeginMap;
  kv(e, "tied", a.embedding.tied);
  kv(e, "scale_by_sqrt_hidden", a.embedding.scale_by_sqrt_hidden);
  if (a.embedding.multiplier) kv_float(e, "multiplier", *a.embedding.multiplier);
  kv(e, "type_vocab_size", a.embedding.type_vocab_size);
  kv(e, "norm", a.embedding.norm);
  e << EndMap;
  e << Key << "head" << Value << Flow << BeginMap;
  kv(e, "kind", head_kind_name(a.head.kind));
  kv(e, "final_norm", a.head.final_norm);
  if (a.head.bias) kv(e, "bias", a.head.bias);
  if (a.head.logit_scale) kv_float(e, "logit_scale", *a.head.logit_scale);
  kv_float(e, "logit_softcap", a.head.logit_softcap);
  e << EndMap;
  if (family != nullptr)
    for (const auto& section : family->sections)
      if (a.sections.has(section.key)) section.write_yaml(e, a);
  if (takes("moe"))   write_moe(e, a.moe);
  e << EndMap;

  std::string out;
  for (const auto& line : header) out += line.empty() ? "#\n" : "# " + line + "\n";
  out += e.c_str();
  out += "\n";
  return out;
}

}  // namespace fk::spec
