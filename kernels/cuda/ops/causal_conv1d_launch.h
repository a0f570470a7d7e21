// Launcher of the CUDA causal_conv1d baseline (plain arguments; see elem.h and
// kernels/ops/causal_conv1d.cc for the semantics).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// Widths the kernel is instantiated for (weight dim 1).
inline constexpr int64_t kCausalConv1dMinWidth = 2;
inline constexpr int64_t kCausalConv1dMaxWidth = 8;

// out[b, t, c] = act(bias[c] + sum_k weight[c, k] * xx[b, t + k, c]) with xx[b] =
// concat(conv_state[b], x[b]) along time; then conv_state[b] = the last width - 1 rows
// of xx[b]. x, out [batch, len, channels], weight [channels, width], bias [channels]
// or null, conv_state [batch, width - 1, channels], all of `elem` and contiguous; silu
// picks the activation (else none). fp32 accumulation, one rounding per output.
// cudaErrorInvalidValue unless width is in [kCausalConv1dMinWidth,
// kCausalConv1dMaxWidth]; no-op when batch, len or channels is 0.
cudaError_t causal_conv1d(void* out, const void* x, const void* weight, const void* bias, void* conv_state, Elem elem,
                          int64_t batch, int64_t len, int64_t channels, int64_t width, bool silu, cudaStream_t stream);

}  // namespace fk::cuda::launch
