// Launcher of the CUDA selective_scan baseline (plain arguments; see elem.h and
// kernels/ops/selective_scan.cc for the semantics).
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

}  // namespace fk::cuda::launch
