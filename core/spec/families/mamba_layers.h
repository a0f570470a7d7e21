// Mamba layers inside a transformer (Jamba: AI21's JambaForCausalLM; Bamba: IBM's
// BambaForCausalLM), the transformer family's own `mamba:` section
// (core/spec/family_section.h). Every layer not in `attention_layers` mixes its tokens with
// a Mamba mixer of `inner_size` channels instead of attention; its feed-forward is the
// layer's MLP or MoE as in any transformer layer. Version 1 (Jamba): the Mamba-1 mixer
// (in_proj to x and gate, a depthwise causal conv, x_proj to dt, B and C, dt_proj, the
// selective scan, out_proj); `inner_norms`: dt, B and C pass through RMSNorms (eps
// norm.eps) before the scan (JambaMambaMixer's dt_layernorm, b_layernorm, c_layernorm).
// Version 2 (Bamba): the Mamba-2 mixer (in_proj to gate, x, B, C and one dt a head, the
// conv over x, B and C, the SSD scan over num_heads heads of head_dim with B and C in
// n_groups groups, a gated RMSNorm over all channels, out_proj); its fields are written
// only then, so version 1 specs and job ids are unchanged. Tensor parallelism splits the
// mixer's channels (and heads and groups) as the Mamba family does. Rules:
// mamba_layers.cc; the runner's mixer: runner/model/transformer/mamba_mixer.cc.
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/limits.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fk::spec {

struct ParseContext;
struct SectionCodec;

struct MambaLayersSpec {
  static constexpr const char* kKey = "mamba";
  int64_t inner_size = 0;      // the mixer's channels (HF mamba_expand x hidden_size); required
  int64_t state_size = 0;      // N, the state per channel (HF mamba_d_state); required
  int64_t conv_kernel = 4;     // width of the depthwise causal conv (HF mamba_d_conv)
  int64_t time_step_rank = 0;  // version 1: rank of the dt projection (HF mamba_dt_rank); required
  bool conv_bias = true;       // HF mamba_conv_bias
  bool proj_bias = false;      // bias on in_proj and out_proj (HF mamba_proj_bias)
  bool inner_norms = true;     // version 1: RMSNorms of dt, B and C before the scan (Jamba's)
  // The layers that keep attention (0-based, ascending); every other layer is a Mamba layer.
  std::vector<int64_t> attention_layers;
  int64_t version = 1;  // 1: Mamba-1 (selective scan), 2: Mamba-2 (SSD scan)
  // Version 2 only: num_heads x head_dim = inner_size; n_groups divides num_heads; dt
  // clamped to [min, max] after softplus (max 0: no clamp).
  int64_t num_heads = 0, head_dim = 0, n_groups = 1;
  double time_step_limit_min = 0.0, time_step_limit_max = 0.0;
  bool mamba2() const { return version == 2; }
  // Version 2: the conv's channels on one of `tp` ranks (x, then B and C of its groups).
  int64_t conv_dim(int64_t tp = 1) const { return inner_size / tp + 2 * (n_groups / tp) * state_size; }
  bool is_mamba(int64_t layer) const;
  bool operator==(const MambaLayersSpec&) const = default;
};

namespace limits {
inline constexpr IntRange kMambaInnerSize{1, kMaxDim};
}  // namespace limits

// The transformer family's `mamba:` section codec (registered in transformer.cc).
const SectionCodec& mamba_layers_section();
// The section's rules against the rest of the architecture (transformer_validate calls it).
void mamba_layers_validate(const Architecture& a, const ParseContext& ctx);
// Whether layer `layer` of `a` is a Mamba layer (false without the section).
bool is_mamba_layer(const Architecture& a, int64_t layer);
// What a layout cannot shard of the Mamba layers (tp must divide inner_size; version 2:
// num_heads and n_groups too).
std::vector<std::string> mamba_layers_misfits(const Architecture& a, int64_t tp);
// A Mamba layer's mixer parameters on one of `tp` ranks (its inner_size / tp channels).
int64_t mamba_mixer_parameters(const Architecture& a, int64_t tp);
// The recurrent state of one Mamba layer for `batch` sequences on one of `tp` ranks, in
// elements: the conv window ((conv_kernel - 1) x its conv channels) and the scan state
// (inner / tp x state_size).
int64_t mamba_state_elements(const Architecture& a, int64_t batch, int64_t tp);
// The fp32 values a token holds in a Mamba layer's mixer on one of `tp` ranks (the
// memory estimate's working set).
int64_t mamba_values_per_token(const Architecture& a, int64_t tp);

}  // namespace fk::spec
