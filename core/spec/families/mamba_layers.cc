// The transformer family's `mamba:` section (mamba_layers.h): reading, limits, writing,
// JSON, and its rules against the other fields.
#include "core/spec/families/mamba_layers.h"

#include "core/spec/families/mamba.h"
#include "core/spec/families/mla.h"
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
  r.integer("time_step_rank", m.time_step_rank, Need::kRequired, kTimeStepRank);
  r.boolean("conv_bias", m.conv_bias, Need::kOptional);
  r.boolean("proj_bias", m.proj_bias, Need::kOptional);
  r.boolean("inner_norms", m.inner_norms, Need::kOptional);
  r.integer_list("attention_layers", m.attention_layers, Need::kRequired, kLayer);
}

bool mamba_check_limits(const Architecture& a, const ParseContext& ctx) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  bool ok = ctx.check_range("mamba.inner_size", m.inner_size, limits::kMambaInnerSize);
  ok &= ctx.check_range("mamba.state_size", m.state_size, kSsmStateSize);
  ok &= ctx.check_range("mamba.conv_kernel", m.conv_kernel, kSsmConvKernel);
  ok &= ctx.check_range("mamba.time_step_rank", m.time_step_rank, kTimeStepRank);
  for (size_t i = 0; i < m.attention_layers.size(); ++i)
    ok &= ctx.check_range(fmt::format("mamba.attention_layers[{}]", i), m.attention_layers[i], kLayer);
  return ok;
}

void mamba_write_yaml(YAML::Emitter& e, const Architecture& a) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  e << YAML::Key << MambaLayersSpec::kKey << YAML::Value << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "inner_size" << YAML::Value << static_cast<long long>(m.inner_size);
  e << YAML::Key << "state_size" << YAML::Value << static_cast<long long>(m.state_size);
  e << YAML::Key << "conv_kernel" << YAML::Value << static_cast<long long>(m.conv_kernel);
  e << YAML::Key << "time_step_rank" << YAML::Value << static_cast<long long>(m.time_step_rank);
  e << YAML::Key << "conv_bias" << YAML::Value << m.conv_bias;
  e << YAML::Key << "proj_bias" << YAML::Value << m.proj_bias;
  e << YAML::Key << "inner_norms" << YAML::Value << m.inner_norms;
  e << YAML::Key << "attention_layers" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int64_t l : m.attention_layers) e << static_cast<long long>(l);
  e << YAML::EndSeq << YAML::EndMap;
}

Json mamba_to_json(const Architecture& a) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  return Json{{"inner_size", m.inner_size},   {"state_size", m.state_size},
              {"conv_kernel", m.conv_kernel}, {"time_step_rank", m.time_step_rank},
              {"conv_bias", m.conv_bias},     {"proj_bias", m.proj_bias},
              {"inner_norms", m.inner_norms}, {"attention_layers", m.attention_layers}};
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
}

// A preset keeps the switches and whether any layer keeps attention.
std::vector<std::string> mamba_structure(const Architecture& a) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
  return {fmt::format("mamba.conv_bias={}", m.conv_bias), fmt::format("mamba.proj_bias={}", m.proj_bias),
          fmt::format("mamba.inner_norms={}", m.inner_norms),
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

int64_t mamba_mixer_parameters(const Architecture& a, int64_t tp) {
  const MambaLayersSpec& m = a.sections.get<MambaLayersSpec>();
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
  const int64_t i = m.inner_size / tp;
  return batch * ((m.conv_kernel - 1) * i + i * m.state_size);
}

}  // namespace fk::spec
