// Launcher of the device fill used by the CUDA backend (plain arguments, see ops/elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// Every one of `count` elements of `data` set to `value` rounded once to `elem`.
cudaError_t fill(void* data, Elem elem, int64_t count, float value, cudaStream_t stream);

}  // namespace fk::cuda::launch
