// Launcher of the CUDA rms_norm baseline (plain arguments; see elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// out[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * weight; contiguous [tokens, hidden].
cudaError_t rms_norm(void* out, const void* x, const void* weight, Elem elem, int64_t tokens, int64_t hidden,
                     float eps, cudaStream_t stream);

}  // namespace fk::cuda::launch
