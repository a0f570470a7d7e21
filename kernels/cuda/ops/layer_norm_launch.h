// Launcher of the CUDA layer_norm baseline (plain arguments; see elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// out[t, :] = (x[t, :] - mean) / sqrt(var + eps) * weight + bias over contiguous
// [tokens, hidden] rows (biased variance). No-op when either size is 0.
cudaError_t layer_norm(void* out, const void* x, const void* weight, const void* bias, Elem elem, int64_t tokens,
                       int64_t hidden, float eps, cudaStream_t stream);

}  // namespace fk::cuda::launch
