// Launcher of the device fill used by the CUDA backend (plain arguments, see ops/elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// Every one of `count` elements of `data` set to `value` rounded once to `elem`.
cudaError_t fill(void* data, Elem elem, int64_t count, float value, cudaStream_t stream);

// Elements [0, rows * ncols) of `data` set to Philox4x32-10 uniforms (core/rng.h) of
// the block rows [row0, +rows) x columns [col0, +ncols) of a global tensor with `cols`
// columns: lo + (hi - lo) * u (+ add when add != 0), in fp32 without contraction, then
// rounded once to `elem`. Bit-identical to rng_fill_uniform on the host.
cudaError_t fill_uniform(void* data, Elem elem, uint64_t key, int64_t cols, int64_t row0, int64_t rows, int64_t col0,
                         int64_t ncols, float lo, float hi, float add, cudaStream_t stream);

}  // namespace fk::cuda::launch
