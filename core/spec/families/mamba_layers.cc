// The transformer family's `mamba:` section (mamba_layers.h): reading, limits, writing,
// JSON, and its rules against the other fields.
#include "core/spec/families/mamba_layers.h"

#include "core/spec/families/mamba.h"
#include "core/spec/families/mla.h"
#include "core/spec/families/ssd_fields.h"
#include "core/spec/family.h"
#include "core/spec/json_io.h"
#include "core/spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <algorithm>

namespace fk::spec {
namespace {

// The mixer's limits are the Mamba family's (the same ops run it).
using limits::kSsmConvKernel;
using limits::kSsmStateSize;
constexpr IntRange kTimeStepRank = limits::kSsmTimeStepRank;
constexpr IntRange kLayer{0, limits::kMaxDim};

void mamba_read(MapReader& r, Architecture& a) {
  MambaLayersSpec& m = a.sections.edit<MambaLayersSpec>();
  r.integer("inner_size", m.inner_size, Need::kRequired, limits::kMambaInnerSize);
  r.integer("state_size", m.state_size, Need::kRequired, kSsmStateSize);
  r.integer("conv_kernel", m.conv_kernel, Need::kOptional, kSsmConvKernel);
  r.boolean("conv_bias", m.conv_bias, Need::kOptional);
  r.boolean("proj_bias", m.proj_bias, Need::kOptional);
  r.integer("version", m.version, Need::kOptional, limits::kSsmVersion);
  r.boolean("inner_norms", m.inner_norms, Need::kOptional);
  r.integer_list("attention_layers", m.attention_layers, Need::kRequired, kLayer);
  r.integer("time_step_rank", m.time_step_rank, m.mamba2() ? Need::kOptional : Need::kRequired, kTimeStepRank);
  ssd_fields_read(r, m, m.mamba2());
  if (m.mamba2()) m.inner_norms = false;  // Mamba-2 has none (an explicit true is an error: validate)
}

bool mamba_check_limits(const Architecture& a, const ParseContext& ctx) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  bool ok = ctx.check_range("mamba.inner_size", m.inner_size, limits::kMambaInnerSize);
  ok &= ctx.check_range("mamba.state_size", m.state_size, kSsmStateSize);
  ok &= ctx.check_range("mamba.conv_kernel", m.conv_kernel, kSsmConvKernel);
  ok &= ctx.check_range("mamba.version", m.version, limits::kSsmVersion);
  if (m.mamba2()) {
    ok &= ssd_fields_check(ctx, MambaLayersSpec::kKey, m);
  } else {
    ok &= ctx.check_range("mamba.time_step_rank", m.time_step_rank, kTimeStepRank);
  }
  for (size_t i = 0; i < m.attention_layers.size(); ++i)
    ok &= ctx.check_range(fmt::format("mamba.attention_layers[{}]", i), m.attention_layers[i], kLayer);
  return ok;
}

void mamba_write_yaml(YAML::Emitter& e, const Architecture& a) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  e << YAML::Key << MambaLayersSpec::kKey << YAML::Value << YAML::Flow << YAML::BeginMap;
  if (m.mamba2()) e << YAML::Key << "version" << YAML::Value << static_cast<long long>(m.version);
  e << YAML::Key << "inner_size" << YAML::Value << static_cast<long long>(m.inner_size);
  e << YAML::Key << "state_size" << YAML::Value << static_cast<long long>(m.state_size);
  e << YAML::Key << "conv_kernel" << YAML::Value << static_cast<long long>(m.conv_kernel);
  if (!m.mamba2()) e << YAML::Key << "time_step_rank" << YAML::Value << static_cast<long long>(m.time_step_rank);
  e << YAML::Key << "conv_bias" << YAML::Value << m.conv_bias;
  e << YAML::Key << "proj_bias" << YAML::Value << m.proj_bias;
  if (m.mamba2()) {
    ssd_fields_write(e, m);
  } else {
    e << YAML::Key << "inner_norms" << YAML::Value << m.inner_norms;
  }
  e << YAML::Key << "attention_layers" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int64_t l : m.attention_layers) e << static_cast<long long>(l);
  e << YAML::EndSeq << YAML::EndMap;
}

Json mamba_to_json(const Architecture& a) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  Json j{{"inner_size", m.inner_size},   {"state_size", m.state_size},
         {"conv_kernel", m.conv_kernel}, {"time_step_rank", m.time_step_rank},
         {"conv_bias", m.conv_bias},     {"proj_bias", m.proj_bias},
         {"inner_norms", m.inner_norms}, {"attention_layers", m.attention_layers}};
  if (m.mamba2()) {  // written only then: version 1 job ids stay as they were
    ssd_fields_to_json(j, m);
  }
  return j;
}

void mamba_from_json(const JsonIn& in, Architecture& a) {
  MambaLayersSpec& m = a.sections.edit<MambaLayersSpec>();
  m.inner_size = in.at("inner_size").i64();
  m.state_size = in.at("state_size").i64();
  m.conv_kernel = in.at("conv_kernel").i64();
  m.time_step_rank = in.at("time_step_rank").i64();
  m.conv_bias = in.at("conv_bias").boolean();
  m.proj_bias = in.at("proj_bias").boolean();
  m.inner_norms = in.at("inner_norms").boolean();
  const JsonIn layers = in.at("attention_layers");
  m.attention_layers.clear();
  for (size_t i = 0; i < layers.size(); ++i) m.attention_layers.push_back(layers.at(i).i64(0));
  if (in.has("version")) ssd_fields_from_json(in, m);
}

// A preset keeps the switches and whether any layer keeps attention.
std::vector<std::string> mamba_structure(const Architecture& a) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  return {fmt::format("mamba.version={}", m.version), fmt::format("mamba.conv_bias={}", m.conv_bias),
          fmt::format("mamba.proj_bias={}", m.proj_bias), fmt::format("mamba.inner_norms={}", m.inner_norms),
          fmt::format("mamba.attention_layers={}", m.attention_layers.empty() ? "none" : "some")};
}

}  // namespace

bool MambaLayersSpec::is_mamba(int64_t layer) const {
  return std::find(attention_layers.begin(), attention_layers.end(), layer) == attention_layers.end();
}

const SectionCodec& mamba_layers_section() {
  static const SectionCodec codec{MambaLayersSpec::kKey, false,         mamba_read,      mamba_check_limits,
                                  mamba_write_yaml,      mamba_to_json, mamba_from_json, mamba_structure};
  return codec;
}

void mamba_layers_validate(const Architecture& a, const ParseContext& ctx) {
  const SourceMap& w = *ctx.where;
  auto err = [&](const std::string& field, std::string msg) { ctx.error(w.at(field), field, std::move(msg)); };
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  if (a.sections.find<MlaSpec>() != nullptr)
    err("mamba", "Mamba layers beside MLA attention are not built (one non-default mixer a model)");
  if (!a.attention.causal) err("attention.causal", "a model with Mamba layers is a decoder (causal)");
  if (m.inner_norms && a.norm.kind != NormKind::kRmsNorm)
    err("norm.kind", "mamba.inner_norms are RMSNorms with norm.eps: needs rmsnorm");
  if (m.mamba2()) {
    for (const char* f : {"mamba.time_step_rank", "mamba.inner_norms"})
      if (w.has(f)) err(f, "applies to version 1 (Mamba-1) layers only");
    if (a.norm.kind != NormKind::kRmsNorm)
      err("norm.kind", "Mamba-2's gated norm is an RMSNorm with norm.eps: needs rmsnorm");
    ssd_fields_validate(err, MambaLayersSpec::kKey, m, m.inner_size, "inner_size");
  } else {
    for (const char* f : kSsdFields)
      if (w.has(std::string("mamba.") + f))
        err(std::string("mamba.") + f, "applies to version 2 (Mamba-2) layers only (mamba.version: 2)");
  }
  if (a.mlp.activation != Activation::kSilu)
    err("mlp.activation", "the Mamba mixer's activation is silu, and HF's hidden_act drives both it and the MLP");
  const auto& al = m.attention_layers;
  bool ok = true;
  for (size_t i = 0; i < al.size(); ++i) {
    if (al[i] >= a.num_hidden_layers) {
      err("mamba.attention_layers", fmt::format("[{}] = {} is not a layer of a {}-layer model (layers are 0-based)", i,
                                                al[i], a.num_hidden_layers));
      ok = false;
    } else if (i > 0 && al[i] <= al[i - 1]) {
      err("mamba.attention_layers",
          fmt::format("[{}] = {} follows {}; list the layers in ascending order, each once", i, al[i], al[i - 1]));
      ok = false;
    }
  }
  if (ok && static_cast<int64_t>(al.size()) == a.num_hidden_layers)
    err("mamba.attention_layers", "lists every layer: no Mamba layer is left (drop the mamba section)");
}

bool is_mamba_layer(const Architecture& a, int64_t layer) {
  const MambaLayersSpec* m = a.sections.find<MambaLayersSpec>();
  return m != nullptr && m->is_mamba(layer);
}

std::vector<std::string> mamba_layers_misfits(const Architecture& a, int64_t tp) {
  std::vector<std::string> out;
  const MambaLayersSpec* m = a.sections.find<MambaLayersSpec>();
  if (m == nullptr) return out;
  if (m->inner_size % tp != 0)
    out.push_back(fmt::format("tp ({}) does not divide mamba.inner_size ({}), the Mamba mixer channels it splits", tp,
                              m->inner_size));
  if (m->mamba2() && m->num_heads % tp != 0)
    out.push_back(fmt::format("tp ({}) does not divide mamba.num_heads ({}), the heads it splits", tp, m->num_heads));
  if (m->mamba2() && m->n_groups % tp != 0)
    out.push_back(
        fmt::format("tp ({}) does not divide mamba.n_groups ({}): each rank holds the B and C of its "
                    "heads' groups (replicating groups over ranks is not built)",
                    tp, m->n_groups));
  return out;
}

int64_t mamba_mixer_parameters(const Architecture& a, int64_t tp) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  if (m.mamba2()) {  // in_proj, conv, dt_bias, A, D, the gated norm (whole), out_proj
    const int64_t h = a.hidden_size, i = m.inner_size / tp, cd = m.conv_dim(tp), heads = m.num_heads / tp;
    const int64_t in = i + cd + heads;
    int64_t p = in * h + cd * m.conv_kernel + 3 * heads + m.inner_size + h * i;
    if (m.conv_bias) p += cd;
    if (m.proj_bias) p += in + h;
    return p;
  }
  const int64_t h = a.hidden_size, i = m.inner_size / tp, n = m.state_size, r = m.time_step_rank;
  // in_proj, conv, x_proj, dt_proj and its bias, A, D, out_proj.
  int64_t p = 2 * i * h + i * m.conv_kernel + (r + 2 * n) * i + i * r + i + i * n + i + h * i;
  if (m.conv_bias) p += i;
  if (m.proj_bias) p += 2 * i + h;
  if (m.inner_norms) p += r + 2 * n;
  return p;
}

int64_t mamba_state_elements(const Architecture& a, int64_t batch, int64_t tp) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  const int64_t i = m.inner_size / tp, conv = m.mamba2() ? m.conv_dim(tp) : i;
  return batch * ((m.conv_kernel - 1) * conv + i * m.state_size);
}

int64_t mamba_values_per_token(const Architecture& a, int64_t tp) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  const int64_t i = m.inner_size / tp;
  if (m.mamba2())  // in_proj's output, the conv's, the scan's, the gated pair and its norm (gathered under TP)
    return 2 * (i + m.conv_dim(tp) + m.num_heads / tp) + 4 * i + (tp > 1 ? 2 * m.inner_size : 0);
  return 5 * i + m.time_step_rank + 2 * m.state_size;  // x and gate, the conv's, the scan's, x_proj's
}

}  // namespace fk::spec
