// Launchers of the CUDA selective_scan and ssd_scan baselines (plain arguments; see
// elem.h, kernels/ops/selective_scan.cc and kernels/ops/ssd_scan.cc for the semantics).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// The largest state size (A dim 1) the kernel holds in registers.
inline constexpr int64_t kSelectiveScanMaxState = 1024;

// Per sequence b and channel c, over the tokens t in order, with h = ssm_state[b, c, :]:
//   dt = delta[b, t, c] + delta_bias[c], then softplus when delta_softplus
//   h[n] = exp(dt a[c, n]) h[n] + dt bm[b, t, n] u[b, t, c]
//   out[b, t, c] = (sum_n h[n] cm[b, t, n] + d[c] u[b, t, c]) * silu(z[b, t, c])
// and ssm_state is left holding h. u, delta, z, out [batch, len, channels] and bm, cm
// [batch, len, state] of `elem`; a [channels, state], d and delta_bias [channels],
// ssm_state [batch, channels, state] fp32; d, z and delta_bias may be null (no skip,
// no gate, no bias); all contiguous. cudaErrorInvalidValue unless 1 <= state <=
// kSelectiveScanMaxState; no-op when batch, len or channels is 0.
cudaError_t selective_scan(void* out, const void* u, const void* delta, const float* a, const void* bm,
                           const void* cm, const float* d, const void* z, const float* delta_bias, float* ssm_state,
                           Elem elem, int64_t batch, int64_t len, int64_t channels, int64_t state,
                           bool delta_softplus, cudaStream_t stream);

// ssd_scan's time step: softplus or not, then clamped to [min, max] when max > 0.
struct SsdDt {
  bool softplus = true;
  float min = 0.f, max = 0.f;
};

// Per sequence b, head h (of group h / (heads / groups)) and channel p, over the tokens
// in order, with s = ssm_state[b, h, p, :]:
//   dt = dt_rule(dt[b, t, h] + dt_bias[h])
//   s[n] = exp(dt a[h]) s[n] + dt bm[b, t, g, n] x[b, t, h, p]
//   out[b, t, h, p] = (sum_n s[n] cm[b, t, g, n] + d[h] x[b, t, h, p]) * silu(z[b, t, h, p])
// x, z, out [batch, len, heads, head_dim], dt [batch, len, heads], bm, cm [batch, len,
// groups, state] of `elem`; a, d, dt_bias [heads], ssm_state [batch, heads, head_dim,
// state] fp32; d, z and dt_bias may be null; all contiguous. cudaErrorInvalidValue
// unless 1 <= state <= kSelectiveScanMaxState and groups divides heads.
cudaError_t ssd_scan(void* out, const void* x, const void* dt, const float* a, const void* bm, const void* cm,
                     const float* d, const void* z, const float* dt_bias, float* ssm_state, Elem elem, int64_t batch,
                     int64_t len, int64_t heads, int64_t head_dim, int64_t groups, int64_t state, const SsdDt& dt_rule,
                     cudaStream_t stream);

}  // namespace fk::cuda::launch
