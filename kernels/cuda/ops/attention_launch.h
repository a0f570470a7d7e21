// Launcher of the CUDA attention baseline (plain arguments; see elem.h and
// kernels/ops/attention.cc for the semantics: causal/bidirectional, GQA, sliding
// window, soft-cap, queries at positions q_start .. q_start + q_len - 1).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// Largest head_dim the kernel handles (its per-thread accumulators are sized for it).
inline constexpr int64_t kAttentionMaxHeadDim = 256;

// out, query [batch * q_len, q_heads, head_dim]; key_cache, value_cache
// [batch, cache_len, kv_heads, head_dim]; all contiguous. Needs q_len >= 1,
// q_start + q_len <= cache_len, q_heads % kv_heads == 0, head_dim <= kAttentionMaxHeadDim
// and kv_heads <= 65535 (cudaErrorInvalidValue otherwise). window > 0 limits a causal
// query at position p to keys p - window + 1 .. p; softcap > 0 caps the scores; sinks,
// device fp32 [q_heads] or null, adds exp(sinks[h]) to head h's softmax denominator.
// kv_len > 0 makes it cross-attention (kernels/ops/attention.cc, cross_attention): every
// query row sees keys 0 .. kv_len - 1 of its sequence; it needs causal false, window 0,
// q_start 0 and kv_len <= cache_len, and q_len may exceed kv_len.
cudaError_t attention(void* out, const void* query, const void* key_cache, const void* value_cache, Elem elem,
                      int64_t batch, int64_t cache_len, int64_t q_len, int64_t q_start, int64_t q_heads,
                      int64_t kv_heads, int64_t head_dim, float scale, bool causal, int64_t window, float softcap,
                      const float* sinks, cudaStream_t stream, int64_t kv_len = 0);

}  // namespace fk::cuda::launch
