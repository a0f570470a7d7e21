// Launcher of the CUDA fused_add_rms_norm baseline (plain arguments; see elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// In place on contiguous [tokens, hidden] rows: residual = round(input + residual);
// input = residual / sqrt(mean(residual^2) + eps) * weight. No-op when either size is 0.
cudaError_t fused_add_rms_norm(void* input, void* residual, const void* weight, Elem elem, int64_t tokens,
                               int64_t hidden, float eps, cudaStream_t stream);

}  // namespace fk::cuda::launch
