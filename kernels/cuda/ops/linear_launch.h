// Launcher of the small kernel the CUDA linear baseline needs besides cuBLASLt: the
// k == 0 case, where out[m, n] is the bias broadcast over rows (or zeros).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// out[r, j] = bias ? bias[j] : 0 for r < rows, j < n; contiguous. bias may be null.
cudaError_t linear_fill_bias(void* out, const void* bias, Elem elem, int64_t rows, int64_t n, cudaStream_t stream);

}  // namespace fk::cuda::launch
