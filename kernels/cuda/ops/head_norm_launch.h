// Launcher of the CUDA head_norm baseline (plain arguments; see elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// A norm of each head_dim-long head of contiguous [tokens, n] rows, each head with its
// own weight (and bias, may be null) out of [n]: RMSNorm (layer false) or LayerNorm
// (layer true, biased variance); fp32 accumulation, one rounding per output. No-op when
// a size is 0; cudaErrorInvalidValue when head_dim does not divide n, or an RMSNorm is
// given a bias.
cudaError_t head_norm(void* out, const void* x, const void* weight, const void* bias, Elem elem, int64_t tokens,
                      int64_t n, int64_t head_dim, bool layer, float eps, cudaStream_t stream);

}  // namespace fk::cuda::launch
