// Launcher of the CUDA embedding baseline (plain arguments; see elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// out[t, :] = weight[ids[t] - vocab_start, :] when 0 <= ids[t] - vocab_start < rows,
// else zeros; ids are int64 (ids_i64) or int32, weight [rows, hidden], out [tokens,
// hidden], all contiguous. No-op when tokens or hidden is 0.
cudaError_t embedding(void* out, const void* ids, bool ids_i64, const void* weight, Elem elem, int64_t tokens,
                      int64_t hidden, int64_t rows, int64_t vocab_start, cudaStream_t stream);

}  // namespace fk::cuda::launch
