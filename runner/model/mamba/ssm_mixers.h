// The Mamba mixers on one TP rank, shared by the Mamba family's layers (mamba.cc) and the
// transformer's Mamba layers (Jamba, Bamba; runner/model/transformer/mamba_mixer.cc).
//
// Mamba-1 (selective_mixer; HF MambaMixer / JambaMambaMixer, vLLM's MambaMixer):
//   xz = in_proj(x); x, z = split(xz)            column-parallel (x and gate channels)
//   x  = silu(causal_conv1d(x; conv_state))      per channel
//   dt, B, C = split(x_proj(x))                  row-parallel, all-reduced over TP
//   dt, B, C = rms_norm(dt), rms_norm(B), rms_norm(C)   Jamba's inner norms, when given
//   y  = selective_scan(x, dt_proj(dt), A, B, C, D, z, dt_bias; ssm_state)
//   out_proj(y)                                  row-parallel, all-reduced over TP
//
// Mamba-2 (ssd_mixer; HF Mamba2Mixer / BambaMixer, vLLM's MambaMixer2):
//   z, xBC, dt = split(in_proj(x))               gate I, x B C conv_dim, one dt a head
//   xBC = silu(causal_conv1d(xBC; conv_state))
//   y  = ssd_scan(x, dt, A, B, C, D, dt_bias; ssm_state)   heads of head_dim, groups of B, C
//   out_proj(rms_norm(silu(z) * y))              HF's MambaRMSNormGated, over all I
// TP splits the heads (their x and gate channels, dt, A, D) and the groups of B and C;
// the gated norm runs over every channel, so its input is all-gathered over TP
// (tp.gate_norm_gather) and each rank keeps its block; out_proj is row-parallel.
#pragma once

#include "core/tensor.h"
#include "runner/model/model_comms.h"
#include "runner/model/weight_plan.h"
#include "runner/runtime.h"

#include <functional>
#include <optional>
#include <string>

namespace fk::runner {

// The rank's tensors (its I_l of the mixer's channels).
struct SelectiveMixerWeights {
  Tensor in_proj_w, in_proj_b;     // [2 I_l, H] (x rows, then gate rows), bias or undefined
  Tensor conv_w, conv_b;           // [I_l, W], [I_l] or undefined
  Tensor x_proj_w;                 // [R + 2 N, I_l]
  Tensor dt_norm, b_norm, c_norm;  // [R], [N], [N]: the inner RMSNorms, or undefined (none)
  Tensor dt_proj_w;                // [I_l, R]
  Tensor dt_bias, a, d;            // fp32: [I_l], [I_l, N] (A = -exp(A_log)), [I_l]
  Tensor out_proj_w, out_proj_b;   // [H, I_l], [H] (rank 0 adds it) or undefined
};

struct SelectiveMixerShape {
  int64_t inner_local = 0;     // I_l
  int64_t state_size = 0;      // N
  int64_t time_step_rank = 0;  // R
  double norm_eps = 0;         // the inner norms'
};

// The rank's Mamba-2 tensors: its heads [h0, h0 + heads_l) and groups [g0, g0 + groups_l).
struct SsdMixerWeights {
  Tensor in_proj_w, in_proj_b;    // [I_l + cd_l + heads_l, H] (gate z, then x B C, then dt)
  Tensor conv_w, conv_b;          // [cd_l, W], [cd_l] or undefined; cd_l = I_l + 2 groups_l N
  Tensor dt_bias, a, d;           // fp32 [heads_l] (a = -exp(A_log))
  Tensor gate_norm_w;             // [I] whole: the gated RMSNorm's weight
  Tensor out_proj_w, out_proj_b;  // [H, I_l], [H] (rank 0 adds it) or undefined
};

struct SsdMixerShape {
  int64_t tp = 1, tp_rank = 0;
  int64_t inner = 0;              // I, every rank's channels
  int64_t heads = 0, groups = 0;  // every rank's
  int64_t head_dim = 0, state_size = 0;
  double norm_eps = 0;                // the gated norm's
  double dt_min = 0.0, dt_max = 0.0;  // dt clamped to [min, max] after softplus (max 0: none)
  int64_t inner_local() const { return inner / tp; }
  int64_t conv_local() const { return inner / tp + 2 * (groups / tp) * state_size; }
};

// The mixer's output [seqs q_len, H] for x [seqs q_len, H] (sequence-major), its
// sequences' states (conv_state [seqs, W - 1, I_l] in `dtype`, ssm_state [seqs, I_l, N]
// fp32) moved on by q_len tokens; all-reduced over comms.tp.
Tensor selective_mixer(Runtime& rt, const ModelComms& comms, int64_t tp_rank, DType dtype, const SelectiveMixerShape& s,
                       const SelectiveMixerWeights& w, const Tensor& x, const Tensor& conv_state,
                       const Tensor& ssm_state, int64_t seqs, int64_t q_len);

// The blocks of HF's Mamba-2 mixer tensors (Mamba2Mixer, BambaMixer: in_proj, conv1d,
// dt_bias, A_log, D, norm, out_proj; `name(rest)` is the layer's tensor `rest`, e.g.
// "in_proj.weight") that make one rank's SsdMixerWeights: its heads' gate z, x and dt
// rows of in_proj and its groups' B and C rows (and the conv's, likewise), its heads'
// dt_bias, A_log and D, the gated norm's weight whole, out_proj's columns. Random values
// (docs/runner.md): U(-4.6, -2.3) for dt_bias, A_log U(0, ln(max(heads, 2))), D
// U(0.5, 1.5), norm weights U(0.8, 1.2), biases U(-0.1, 0.1), linear weights U(-a, a).
struct SsdPlans {
  Planned in_proj_w, conv_w, dt_bias, a_log, d, gate_norm_w, out_proj_w;
  std::optional<Planned> in_proj_b, conv_b, out_proj_b;  // when the model has them
};
SsdPlans ssd_plans(const std::function<std::string(const char*)>& name, int64_t hidden, const SsdMixerShape& s,
                   int64_t conv_kernel, bool conv_bias, bool proj_bias);

// Mamba-2's output [seqs q_len, H] for x [seqs q_len, H], its sequences' states
// (conv_state [seqs, W - 1, cd_l] in `dtype`, ssm_state [seqs, I_l, N] fp32, read as
// [seqs, heads_l, head_dim, N]) moved on by q_len tokens; all-reduced over comms.tp.
Tensor ssd_mixer(Runtime& rt, const ModelComms& comms, DType dtype, const SsdMixerShape& s, const SsdMixerWeights& w,
                 const Tensor& x, const Tensor& conv_state, const Tensor& ssm_state, int64_t seqs, int64_t q_len);

}  // namespace fk::runner
