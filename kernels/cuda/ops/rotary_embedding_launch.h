// Launcher of the CUDA rotary_embedding baseline (plain arguments; see elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// Rotates, in place, the first rot_dim elements of every head of query [tokens,
// q_heads * head_size] and key [tokens, k_heads * head_size] by row positions[t] of
// cos_sin_cache [max_positions, rot_dim] (cos | sin halves); neox: pairs (i, i + rot/2),
// else (2i, 2i + 1). positions are int64 (pos_i64) or int32; a token whose position is
// outside [0, max_positions) is left unrotated. rot_dim even, <= head_size, <= 1024.
cudaError_t rotary_embedding(const void* positions, bool pos_i64, void* query, void* key, const void* cos_sin_cache,
                             Elem elem, int64_t tokens, int64_t q_heads, int64_t k_heads, int64_t head_size,
                             int64_t rot_dim, int64_t max_positions, bool neox, cudaStream_t stream);

}  // namespace fk::cuda::launch
