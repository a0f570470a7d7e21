// Launcher of the CUDA kv_cache_write baseline (plain arguments; see elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// For s < batch, i < q_len: key_cache/value_cache [batch, cache_len, row] at (s,
// q_start + i) = key/value [batch * q_len, row] at s * q_len + i, where row = kv_heads *
// head_dim; a bitwise copy. Requires 0 <= q_start, q_start + q_len <= cache_len.
cudaError_t kv_cache_write(const void* key, const void* value, void* key_cache, void* value_cache, Elem elem,
                           int64_t batch, int64_t cache_len, int64_t q_len, int64_t q_start, int64_t row,
                           cudaStream_t stream);

}  // namespace fk::cuda::launch
