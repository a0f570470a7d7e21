// The Mamba family, spec side (core/spec/family.h): a stack of Mamba-1 mixer layers
// (HF MambaForCausalLM: in_proj to x and gate, a depthwise causal conv, the selective
// scan with input-dependent dt, B and C, out_proj), each a pre-RMSNorm residual branch,
// with a vocab-parallel embedding and an (often tied) LM head. Tensor parallelism splits
// the mixer's intermediate_size channels (vLLM's MambaMixer: in_proj, conv, dt_proj, A
// and D column-parallel; x_proj and out_proj row-parallel, each followed by an
// all-reduce); pipeline parallelism splits the layers. `ssm.version: 2` makes the layers
// Mamba-2's (HF Mamba2ForCausalLM: in_proj to gate, x, B, C and one dt a head, the conv
// over x, B and C, the SSD scan, a gated RMSNorm over all heads, out_proj); TP splits
// their heads and groups (tp divides num_heads and n_groups), PP their layers. The runner side is
// runner/model/mamba/.
#include "core/spec/families/mamba.h"
#include "core/spec/families/ssd_fields.h"
#include "core/spec/family.h"
#include "core/spec/json_io.h"
#include "core/spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <algorithm>

namespace fk::spec {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// --- the ssm: section ---------------------------------------------------------------

void ssm_read(MapReader& r, Architecture& a) {
  SsmSpec& m = a.sections.edit<SsmSpec>();
  r.integer("version", m.version, Need::kOptional, limits::kSsmVersion);
  r.integer("state_size", m.state_size, Need::kRequired, limits::kSsmStateSize);
  r.integer("conv_kernel", m.conv_kernel, Need::kOptional, limits::kSsmConvKernel);
  r.boolean("conv_bias", m.conv_bias, Need::kOptional);
  r.boolean("proj_bias", m.proj_bias, Need::kOptional);
  r.integer("time_step_rank", m.time_step_rank, m.mamba2() ? Need::kOptional : Need::kRequired,
            limits::kSsmTimeStepRank);
  ssd_fields_read(r, m, m.mamba2());
}

bool ssm_check_limits(const Architecture& a, const ParseContext& ctx) {
  const SsmSpec& m = a.sections.get<SsmSpec>();
  bool ok = ctx.check_range("ssm.version", m.version, limits::kSsmVersion);
  ok &= ctx.check_range("ssm.state_size", m.state_size, limits::kSsmStateSize);
  ok &= ctx.check_range("ssm.conv_kernel", m.conv_kernel, limits::kSsmConvKernel);
  if (m.mamba2()) {
    ok &= ssd_fields_check(ctx, SsmSpec::kKey, m);
  } else {
    ok &= ctx.check_range("ssm.time_step_rank", m.time_step_rank, limits::kSsmTimeStepRank);
  }
  return ok;
}

void ssm_write_yaml(YAML::Emitter& e, const Architecture& a) {
  const SsmSpec& m = a.sections.get<SsmSpec>();
  e << YAML::Key << SsmSpec::kKey << YAML::Value << YAML::Flow << YAML::BeginMap;
  if (m.mamba2()) e << YAML::Key << "version" << YAML::Value << static_cast<long long>(m.version);
  e << YAML::Key << "state_size" << YAML::Value << static_cast<long long>(m.state_size);
  e << YAML::Key << "conv_kernel" << YAML::Value << static_cast<long long>(m.conv_kernel);
  if (!m.mamba2()) e << YAML::Key << "time_step_rank" << YAML::Value << static_cast<long long>(m.time_step_rank);
  e << YAML::Key << "conv_bias" << YAML::Value << m.conv_bias;
  e << YAML::Key << "proj_bias" << YAML::Value << m.proj_bias;
  if (m.mamba2()) ssd_fields_write(e, m);
  e << YAML::EndMap;
}

Json ssm_to_json(const Architecture& a) {
  const SsmSpec& m = a.sections.get<SsmSpec>();
  Json j{{"state_size", m.state_size},
         {"conv_kernel", m.conv_kernel},
         {"time_step_rank", m.time_step_rank},
         {"conv_bias", m.conv_bias},
         {"proj_bias", m.proj_bias}};
  if (m.mamba2()) {
    ssd_fields_to_json(j, m);
  }
  return j;
}

void ssm_from_json(const JsonIn& in, Architecture& a) {
  SsmSpec& m = a.sections.edit<SsmSpec>();
  m.state_size = in.at("state_size").i64();
  m.conv_kernel = in.at("conv_kernel").i64();
  m.time_step_rank = in.at("time_step_rank").i64();
  m.conv_bias = in.at("conv_bias").boolean();
  m.proj_bias = in.at("proj_bias").boolean();
  if (in.has("version")) ssd_fields_from_json(in, m);
}

std::vector<std::string> ssm_structure(const Architecture& a) {
  const SsmSpec& m = a.sections.get<SsmSpec>();
  std::vector<std::string> out = {fmt::format("ssm.conv_bias={}", m.conv_bias),
                                  fmt::format("ssm.proj_bias={}", m.proj_bias)};
  if (m.mamba2()) out.push_back(fmt::format("ssm.version={}", m.version));
  return out;
}

// --- the family's rules -------------------------------------------------------------

void mamba_validate(const Architecture& a, const ParseContext& ctx) {
  const SourceMap& w = *ctx.where;
  auto err = [&](const std::string& field, std::string msg) { ctx.error(w.at(field), field, std::move(msg)); };
  if (a.norm.kind != NormKind::kRmsNorm) err("norm.kind", "Mamba layers normalise with rmsnorm");
  if (a.norm.placement != NormPlacement::kPre) err("norm.placement", "Mamba layers are pre-norm residual branches");
  if (a.head.kind != HeadKind::kLm) err("head.kind", "a Mamba model ends in an LM head (head.kind lm)");
  if (a.embedding.type_vocab_size != 0) err("embedding.type_vocab_size", "does not apply to model_family mamba");
  if (a.embedding.norm) err("embedding.norm", "does not apply to model_family mamba");
  if (a.embedding.scale_by_sqrt_hidden) err("embedding.scale_by_sqrt_hidden", "does not apply to model_family mamba");
  if (a.head.logit_softcap) err("head.logit_softcap", "does not apply to model_family mamba");
  if (a.head.logit_scale) err("head.logit_scale", "does not apply to model_family mamba");
  if (a.embedding.multiplier) err("embedding.multiplier", "does not apply to model_family mamba");
  if (a.norm.residual_multiplier) err("norm.residual_multiplier", "does not apply to model_family mamba");
  if (a.head.bias) err("head.bias", "does not apply to model_family mamba");
  const SsmSpec& m = a.sections.get<SsmSpec>();
  if (!m.mamba2()) {
    for (const char* f : kSsdFields)
      if (w.has(std::string("ssm.") + f))
        err(std::string("ssm.") + f, "applies to Mamba-2 layers only (ssm.version: 2)");
    return;
  }
  if (w.has("ssm.time_step_rank")) err("ssm.time_step_rank", "does not apply to Mamba-2 layers (one dt a head)");
  ssd_fields_validate(err, SsmSpec::kKey, m, a.intermediate_size, "intermediate_size");
}

std::vector<std::string> mamba_layout_misfits(const Architecture& a, const Workload&, const Layout& l) {
  std::vector<std::string> out;
  const SsmSpec& ssm = a.sections.get<SsmSpec>();
  if (ssm.mamba2() && ssm.num_heads % l.tp != 0)
    out.push_back(fmt::format("tp ({}) does not divide ssm.num_heads ({}), the heads it splits", l.tp, ssm.num_heads));
  if (ssm.mamba2() && ssm.n_groups % l.tp != 0)
    out.push_back(
        fmt::format("tp ({}) does not divide ssm.n_groups ({}): each rank holds the B and C of its heads' "
                    "groups (replicating groups over ranks is not built)",
                    l.tp, ssm.n_groups));
  if (a.intermediate_size % l.tp != 0)
    out.push_back(fmt::format("tp ({}) does not divide intermediate_size ({}), the mixer channels it splits", l.tp,
                              a.intermediate_size));
  if (l.pp > a.num_hidden_layers)
    out.push_back(fmt::format("pp ({}) is more than num_hidden_layers ({})", l.pp, a.num_hidden_layers));
  return out;
}

// Parameters of one mixer layer on one TP rank (its I / tp channels).
int64_t mamba_layer_parameters(const Architecture& a, int64_t tp) {
  const SsmSpec& ssm = a.sections.get<SsmSpec>();
  if (ssm.mamba2()) {  // in_proj, conv, dt_bias, A, D, the gated norm (whole), out_proj, the layer norm
    const int64_t h = a.hidden_size, i = a.intermediate_size / tp, cd = ssm.conv_dim(a.intermediate_size, tp);
    const int64_t heads = ssm.num_heads / tp;
    const int64_t in = i + cd + heads;
    int64_t p = in * h + cd * ssm.conv_kernel + 3 * heads + a.intermediate_size + h * i + h;
    if (ssm.conv_bias) p += cd;
    if (ssm.proj_bias) p += in + h;
    return p;
  }
  const int64_t h = a.hidden_size, i = a.intermediate_size / tp, n = ssm.state_size, r = ssm.time_step_rank;
  int64_t p = 2 * i * h + i * ssm.conv_kernel + (r + 2 * n) * i + i * r + i + i * n + i + h * i + h;
  if (ssm.conv_bias) p += i;
  if (ssm.proj_bias) p += 2 * i + h;
  return p;
}

MemoryEstimate mamba_memory_estimate(const Architecture& a, const Workload& w, const Layout& l, DeviceKind backend) {
  const DType dt = w.dtype_for(a);
  const int64_t bytes = static_cast<int64_t>(dtype_size(dt));
  const SsmSpec& ssm = a.sections.get<SsmSpec>();
  const int64_t h = a.hidden_size, il = a.intermediate_size / l.tp, n = ssm.state_size;
  const int64_t vocab_local = ceil_div(a.vocab_size, l.tp);
  const int64_t batch = w.batch / l.dp;
  MemoryEstimate best;
  for (int64_t stage = 0; stage < l.pp; ++stage) {
    MemoryEstimate m;
    const int64_t count = stage_layer_count(a.num_hidden_layers, l.pp, stage);
    m.layer_parameters = count * mamba_layer_parameters(a, l.tp);
    m.largest_layer_parameters = count > 0 ? mamba_layer_parameters(a, l.tp) : 0;
    m.parameters = m.layer_parameters;
    if (stage == 0) m.parameters += vocab_local * h;
    if (stage == l.pp - 1 && !(a.embedding.tied && l.pp == 1)) m.parameters += vocab_local * h;
    if (stage == l.pp - 1 && a.head.final_norm) m.parameters += h;
    const bool master_kept = backend == DeviceKind::kCpu && dt != DType::kF32;
    m.weights_bytes = m.parameters * (4 + (master_kept ? bytes : 0));
    // The recurrent state replaces the KV cache: the conv window and the scan state of
    // every channel, fp32 in the fp32 run; it does not grow with the context.
    // Mamba-2's conv window spans x, B and C (conv_dim channels).
    const int64_t conv_channels = ssm.mamba2() ? ssm.conv_dim(a.intermediate_size, l.tp) : il;
    m.kv_cache_bytes = count * batch * ((ssm.conv_kernel - 1) * conv_channels + il * n) * 4;
    // Per token (fp32): the stream and its norm, x and gate, the conv output, dt, the
    // scan output, the x_proj output; Mamba-2: in_proj's output, the conv's, the scan's,
    // the gated pair and its norm.
    const int64_t per_token = ssm.mamba2() ? 3 * h + 2 * (il + conv_channels + ssm.num_heads / l.tp) + 4 * il +
                                                 (l.tp > 1 ? 2 * a.intermediate_size : 0)  // the gathered norm
                                           : 3 * h + 6 * il + ssm.time_step_rank + 2 * n;
    m.activation_bytes = batch * w.seq_len * per_token * 4 + batch * vocab_local * 4;
    if (m.total() > best.total()) best = m;
  }
  return best;
}

}  // namespace

void register_mamba_family(FamilyRegistry& r) {
  FamilyRules f;
  f.name = "mamba";
  f.summary = "Mamba-1 or Mamba-2 state-space layers (conv + selective or SSD scan), no attention";
  f.fields = {{"intermediate_size", true}};
  f.sections = {
      {SsmSpec::kKey, true, ssm_read, ssm_check_limits, ssm_write_yaml, ssm_to_json, ssm_from_json, ssm_structure}};
  f.validate = mamba_validate;
  f.layout_misfits = mamba_layout_misfits;
  f.memory_estimate = mamba_memory_estimate;
  f.category = [](const Architecture&) { return FastKernelsCategory::kLinearAttentionSsm; };
  r.add(std::move(f));
}

}  // namespace fk::spec
