#include "core/spec/memory.h"

#include "core/spec/families/mamba_layers.h"
#include "core/spec/families/mla.h"
#include "core/spec/families/vision.h"
#include "core/spec/family.h"

#include <algorithm>
#include <fmt/format.h>

namespace fk::spec {
int64_t heads_per_rank(const Architecture& a, int64_t tp) { return a.num_attention_heads / tp; }

int64_t kv_heads_per_rank(const Architecture& a, int64_t tp) {
  return std::max<int64_t>(1, a.num_key_value_heads / tp);
}

int64_t stage_layer_count(int64_t layers, int64_t pp, int64_t stage) {
  return layers / pp + (stage < layers % pp ? 1 : 0);
}

int64_t stage_first_layer(int64_t layers, int64_t pp, int64_t stage) {
  int64_t first = 0;
  for (int64_t s = 0; s < stage; ++s) first += stage_layer_count(layers, pp, s);
  return first;
}

int64_t layer_parameters_per_rank(const Architecture& a, int64_t layer, int64_t tp) {
  const int64_t h = a.hidden_size, hd = a.head_dim;
  const int64_t q = heads_per_rank(a, tp) * hd, kv = kv_heads_per_rank(a, tp) * hd;
  int64_t p = h * (q + 2 * kv) + q * h;
  if (const MlaSpec* mla = a.sections.find<MlaSpec>()) p = mla_attention_parameters(a, *mla, tp);
  if (a.attention.qkv_bias) p += q + 2 * kv;
  if (a.attention.out_bias) p += h;
  if (a.attention.sinks) p += heads_per_rank(a, tp);
  if (a.attention.qk_norm) {  // LayerNorms may have a bias too
    const int64_t with_bias = a.qk_norm_has_bias() ? 2 : 1;
    if (a.attention.qk_norm_full)
      p += (a.num_attention_heads + a.num_key_value_heads) * hd;
    else if (a.attention.qk_norm_per_head)  // this rank's heads' own weights
      p += with_bias * (q + kv);
    else
      p += with_bias * 2 * hd;
  }
  if (is_mamba_layer(a, layer)) p = mamba_mixer_parameters(a, tp);  // its mixer in place of attention
  const int64_t norm_params = a.norm.kind == NormKind::kLayerNorm ? 2 * h : h;
  const auto placement = a.norm.placement;
  p += norm_params * (placement == NormPlacement::kSandwich ? 4 : placement == NormPlacement::kParallelShared ? 1 : 2);
  if (!a.layer_has_attention_norm(layer)) p -= norm_params;  // ModernBERT's layer 0
  const int64_t mats = a.mlp.gated ? 3 : 2;
  if (a.layer_is_moe(layer)) {
    const int64_t im = a.moe.moe_intermediate_size / tp;
    p += a.moe.num_experts * mats * h * im + h * a.moe.num_experts;
    if (a.moe.shared_experts > 0)
      p += a.moe.shared_experts * mats * h * (a.moe.shared_intermediate_size / tp);
    if (a.moe.shared_expert_gate) p += h;  // replicated on every TP rank
    if (a.moe.router_bias) p += a.moe.num_experts;
    if (a.moe.score_correction_bias) p += a.moe.num_experts;
    if (a.moe.expert_bias) p += a.moe.num_experts * (2 * im + h);  // w2's bias replicated
  } else {
    const int64_t i = a.intermediate_size / tp;
    p += mats * h * i;
    if (a.mlp.bias) p += (mats - 1) * i + h;
  }
  if (const VisionSpec* v = a.sections.find<VisionSpec>(); v != nullptr && v->layer_scale) p += 2 * h;  // LayerScale
  return p;
}

int64_t moe_scratch_bytes(const Architecture& a, int64_t tokens, int64_t inter_local, int64_t elem_bytes) {
  if (!a.moe.enabled() || tokens <= 0) return 0;
  constexpr int64_t kTileRows = 256;  // the taller tile of the cuBLASLt path (fused_moe.cu)
  const int64_t rows =
      std::min(tokens, kMoeChunkTokens) * a.moe.experts_per_token + a.moe.num_experts * (kTileRows - 1);
  const int64_t h = a.hidden_size;
  return rows * (h * elem_bytes + 2 * inter_local * 4 + inter_local * elem_bytes + h * 4);
}

const char* reference_weights_name(ReferenceWeights r) {
  switch (r) {
    case ReferenceWeights::kAuto:
      return "auto";
    case ReferenceWeights::kResident:
      return "resident";
    case ReferenceWeights::kStreamed:
      return "streamed";
  }
  return "?";
}

const std::vector<std::pair<std::string, ReferenceWeights>>& reference_weights_choices() {
  static const std::vector<std::pair<std::string, ReferenceWeights>> all = [] {
    std::vector<std::pair<std::string, ReferenceWeights>> v;
    for (auto r : {ReferenceWeights::kAuto, ReferenceWeights::kResident, ReferenceWeights::kStreamed})
      v.emplace_back(reference_weights_name(r), r);
    return v;
  }();
  return all;
}

MemoryEstimate memory_estimate(const Architecture& a, const Workload& w, const Layout& l, DeviceKind backend,
                               ReferenceWeights reference) {
  const MemoryEstimate resident = family_rules(a).memory_estimate(a, w, l, backend);
  if (reference != ReferenceWeights::kStreamed) return resident;
  // The family's figures are the fp32 run's; the other runs hold everything in the
  // workload dtype (the working set is counted in fp32 for every run).
  const int64_t bytes = static_cast<int64_t>(dtype_size(w.dtype_for(a)));
  MemoryEstimate fp32 = resident;
  fp32.weights_bytes = (resident.parameters - resident.layer_parameters + resident.largest_layer_parameters) * 4;
  MemoryEstimate lowp = resident;
  lowp.weights_bytes = resident.parameters * bytes;
  lowp.kv_cache_bytes = resident.kv_cache_bytes / 4 * bytes;
  return fp32.total() >= lowp.total() ? fp32 : lowp;
}

std::string bytes_human(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (int64_t{1} << 30)) return fmt::format("{:.1f} GiB", b / (1 << 30));
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / (1 << 20));
  if (bytes >= (int64_t{1} << 10)) return fmt::format("{:.1f} KiB", b / (1 << 10));
  return fmt::format("{} B", bytes);
}

}  // namespace fk::spec
