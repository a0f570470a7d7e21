// The transformer family's `mla:` section (mla.h): reading, limits, writing, JSON, and
// its rules against the other fields.
#include "core/spec/families/mla.h"

#include "core/spec/family.h"
#include "core/spec/json_io.h"
#include "core/spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <cmath>

namespace fk::spec {
namespace {

void mla_read(MapReader& r, Architecture& a) {
  MlaSpec& m = a.sections.edit<MlaSpec>();
  r.integer("q_lora_rank", m.q_lora_rank, Need::kOptional, IntRange{0, limits::kMlaRank.max});
  r.integer("kv_lora_rank", m.kv_lora_rank, Need::kRequired, limits::kMlaRank);
  r.integer("qk_nope_head_dim", m.qk_nope_head_dim, Need::kRequired, limits::kMlaHeadDim);
  r.integer("v_head_dim", m.v_head_dim, Need::kRequired, limits::kMlaHeadDim);
}

bool mla_check_limits(const Architecture& a, const ParseContext& ctx) {
  const MlaSpec& m = a.sections.get<MlaSpec>();
  bool ok = ctx.check_range("mla.q_lora_rank", m.q_lora_rank, IntRange{0, limits::kMlaRank.max});
  ok &= ctx.check_range("mla.kv_lora_rank", m.kv_lora_rank, limits::kMlaRank);
  ok &= ctx.check_range("mla.qk_nope_head_dim", m.qk_nope_head_dim, limits::kMlaHeadDim);
  ok &= ctx.check_range("mla.v_head_dim", m.v_head_dim, limits::kMlaHeadDim);
  return ok;
}

void mla_write_yaml(YAML::Emitter& e, const Architecture& a) {
  const MlaSpec& m = a.sections.get<MlaSpec>();
  e << YAML::Key << MlaSpec::kKey << YAML::Value << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "q_lora_rank" << YAML::Value << static_cast<long long>(m.q_lora_rank);
  e << YAML::Key << "kv_lora_rank" << YAML::Value << static_cast<long long>(m.kv_lora_rank);
  e << YAML::Key << "qk_nope_head_dim" << YAML::Value << static_cast<long long>(m.qk_nope_head_dim);
  e << YAML::Key << "v_head_dim" << YAML::Value << static_cast<long long>(m.v_head_dim);
  e << YAML::EndMap;
}

Json mla_to_json(const Architecture& a) {
  const MlaSpec& m = a.sections.get<MlaSpec>();
  return Json{{"q_lora_rank", m.q_lora_rank},
              {"kv_lora_rank", m.kv_lora_rank},
              {"qk_nope_head_dim", m.qk_nope_head_dim},
              {"v_head_dim", m.v_head_dim}};
}

void mla_from_json(const JsonIn& in, Architecture& a) {
  MlaSpec& m = a.sections.edit<MlaSpec>();
  m.q_lora_rank = in.at("q_lora_rank").i64();
  m.kv_lora_rank = in.at("kv_lora_rank").i64();
  m.qk_nope_head_dim = in.at("qk_nope_head_dim").i64();
  m.v_head_dim = in.at("v_head_dim").i64();
}

std::vector<std::string> mla_structure(const Architecture& a) {
  return {fmt::format("mla.q_lora_rank={}", a.sections.get<MlaSpec>().q_lora_rank > 0 ? "set" : "none")};
}

}  // namespace

const SectionCodec& mla_section() {
  static const SectionCodec codec{MlaSpec::kKey,  false,       mla_read,      mla_check_limits,
                                  mla_write_yaml, mla_to_json, mla_from_json, mla_structure};
  return codec;
}

void mla_validate(const Architecture& a, const ParseContext& ctx) {
  const SourceMap& w = *ctx.where;
  auto err = [&](const std::string& field, std::string msg) { ctx.error(w.at(field), field, std::move(msg)); };
  const auto& at = a.attention;
  if (a.position.kind != PositionKind::kRope)
    err("position.kind", "MLA rotates head_dim channels of every head: needs position.kind rope");
  if (a.position.partial_rotary_factor != 1.0)
    err("position.partial_rotary_factor", "with mla, head_dim is the rotary part itself (HF qk_rope_head_dim)");
  if (!a.position.rope_layers.empty()) err("position.rope_layers", "does not apply to MLA layers");
  if (a.num_key_value_heads != a.num_attention_heads)
    err("num_key_value_heads",
        fmt::format("MLA has no key/value heads of its own (every head expands the shared latent): set it to "
                    "num_attention_heads ({})",
                    a.num_attention_heads));
  if (!at.causal) err("attention.causal", "MLA is built for decoders (causal attention)");
  if (at.sliding_window) err("attention.sliding_window", "does not apply to MLA layers");
  if (at.logit_softcap) err("attention.logit_softcap", "does not apply to MLA layers");
  if (at.sinks) err("attention.sinks", "does not apply to MLA layers");
  if (at.qk_norm) err("attention.qk_norm", "does not apply to MLA layers (its norms are on the compressed q and kv)");
  if (at.qkv_bias || at.out_bias)
    err(at.qkv_bias ? "attention.qkv_bias" : "attention.out_bias",
        "MLA's projections without biases are built (DeepSeek-V2/V3's attention_bias false)");
  if (at.query_pre_attn_scalar) err("attention.query_pre_attn_scalar", "does not apply to MLA layers");
  if (a.norm.kind != NormKind::kRmsNorm) err("norm.kind", "MLA's q and kv norms are RMSNorms: needs rmsnorm");
  if (a.norm.placement != NormPlacement::kPre) err("norm.placement", "MLA layers are pre-norm (DeepSeek)");
}

double mla_softmax_scale(const Architecture& a, const MlaSpec& m) {
  if (a.attention.scale) return *a.attention.scale;
  double scale = 1.0 / std::sqrt(static_cast<double>(m.qk_nope_head_dim + a.head_dim));
  const RopeScaling& rs = a.position.rope_scaling;
  if (rs.type == RopeScalingType::kYarn && rs.mscale_all_dim != 0.0 && rs.factor > 1.0) {
    const double mscale = 0.1 * rs.mscale_all_dim * std::log(rs.factor) + 1.0;
    scale *= mscale * mscale;
  }
  return scale;
}

int64_t mla_cache_row(const Architecture& a, const MlaSpec& m) { return m.kv_lora_rank + a.head_dim; }

int64_t mla_attention_parameters(const Architecture& a, const MlaSpec& m, int64_t tp) {
  const int64_t h = a.hidden_size, heads = a.num_attention_heads / tp;
  const int64_t qk = m.qk_nope_head_dim + a.head_dim;
  int64_t p = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * heads * qk : h * heads * qk;
  p += h * mla_cache_row(a, m) + m.kv_lora_rank;                      // kv_a_proj_with_mqa, kv_a_layernorm
  p += m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim);  // kv_b_proj
  p += heads * m.v_head_dim * h;                                      // o_proj
  return p;
}

}  // namespace fk::spec
