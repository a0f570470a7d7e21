// One Mamba-1 mixer on one TP rank, shared by the Mamba family's layers (mamba.cc) and
// the transformer's Mamba layers (Jamba; runner/model/transformer/mamba_mixer.cc):
//   xz = in_proj(x); x, z = split(xz)            column-parallel (x and gate channels)
//   x  = silu(causal_conv1d(x; conv_state))      per channel
//   dt, B, C = split(x_proj(x))                  row-parallel, all-reduced over TP
//   dt, B, C = rms_norm(dt), rms_norm(B), rms_norm(C)   Jamba's inner norms, when given
//   y  = selective_scan(x, dt_proj(dt), A, B, C, D, z, dt_bias; ssm_state)
//   out_proj(y)                                  row-parallel, all-reduced over TP
// HF MambaMixer / JambaMambaMixer, vLLM's MambaMixer.
#pragma once

#include "core/tensor.h"
#include "runner/model/model_comms.h"
#include "runner/runtime.h"

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

// Columns [c0, c0 + cols) of m [rows, K] as a contiguous [rows, cols] tensor in `dtype`.
Tensor column_block(Runtime& rt, DType dtype, const Tensor& m, int64_t c0, int64_t cols);

// The mixer's output [seqs q_len, H] for x [seqs q_len, H] (sequence-major), its
// sequences' states (conv_state [seqs, W - 1, I_l] in `dtype`, ssm_state [seqs, I_l, N]
// fp32) moved on by q_len tokens; all-reduced over comms.tp.
Tensor selective_mixer(Runtime& rt, const ModelComms& comms, int64_t tp_rank, DType dtype, const SelectiveMixerShape& s,
                       const SelectiveMixerWeights& w, const Tensor& x, const Tensor& conv_state,
                       const Tensor& ssm_state, int64_t seqs, int64_t q_len);

}  // namespace fk::runner
