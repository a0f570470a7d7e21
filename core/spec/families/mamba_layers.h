// Mamba layers inside a transformer (Jamba: AI21's JambaForCausalLM), the transformer
// family's own `mamba:` section (core/spec/family_section.h), with HF JambaConfig's
// meanings. Every layer not in `attention_layers` mixes its tokens with a Mamba-1 mixer
// (in_proj to x and gate, a depthwise causal conv, x_proj to dt, B and C, dt_proj, the
// selective scan, out_proj) of `inner_size` channels instead of attention; its
// feed-forward is the layer's MLP or MoE as in any transformer layer. `inner_norms`: dt,
// B and C pass through RMSNorms (eps norm.eps) before the scan (JambaMambaMixer's
// dt_layernorm, b_layernorm, c_layernorm). Tensor parallelism splits the mixer's
// channels as the Mamba family does (vLLM's MambaMixer). Rules: mamba_layers.cc; the
// runner's mixer: runner/model/transformer/mamba_mixer.cc.
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/limits.h"

#include <cstdint>
#include <vector>

namespace fk::spec {

struct ParseContext;
struct SectionCodec;

struct MambaLayersSpec {
  static constexpr const char* kKey = "mamba";
  int64_t inner_size = 0;      // the mixer's channels (HF mamba_expand x hidden_size); required
  int64_t state_size = 0;      // N, the state per channel (HF mamba_d_state); required
  int64_t conv_kernel = 4;     // width of the depthwise causal conv (HF mamba_d_conv)
  int64_t time_step_rank = 0;  // rank of the dt projection (HF mamba_dt_rank); required
  bool conv_bias = true;       // HF mamba_conv_bias
  bool proj_bias = false;      // bias on in_proj and out_proj (HF mamba_proj_bias)
  bool inner_norms = true;     // RMSNorms of dt, B and C before the scan (Jamba's)
  // The layers that keep attention (0-based, ascending); every other layer is a Mamba layer.
  std::vector<int64_t> attention_layers;
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
// A Mamba layer's mixer parameters on one of `tp` ranks (its inner_size / tp channels).
int64_t mamba_mixer_parameters(const Architecture& a, int64_t tp);
// The recurrent state of one Mamba layer for `batch` sequences on one of `tp` ranks, in
// elements: the conv window ((conv_kernel - 1) x inner / tp) and the scan state
// (inner / tp x state_size).
int64_t mamba_state_elements(const Architecture& a, int64_t batch, int64_t tp);

}  // namespace fk::spec
