// Launchers of the CUDA baselines of MLA's ops (plain arguments; see elem.h and
// kernels/ops/mla.cc for the semantics): mla_cache_write, head_linear, mla_attention.
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// Widest cache row (kv_lora_rank + rope_dim) mla_attention keeps a query of in shared memory.
inline constexpr int64_t kMlaMaxRow = 2048;

// cache [batch, cache_len, dc + dr]: row s q_len + i of kv_c [rows, dc] and k_pe [rows, dr]
// goes to position q_start + i of sequence s.
cudaError_t mla_cache_write(const void* kv_c, const void* k_pe, void* cache, Elem elem, int64_t batch,
                            int64_t cache_len, int64_t dc, int64_t dr, int64_t q_len, int64_t q_start,
                            cudaStream_t stream);

// out [tokens, heads, n] = x [tokens, heads, k] . w_h^T with w [heads, n, k], or x . w_h
// with w [heads, k, n] when `w_kn`; fp32 accumulation.
cudaError_t head_linear(void* out, const void* x, const void* w, Elem elem, int64_t tokens, int64_t heads, int64_t k,
                        int64_t n, bool w_kn, cudaStream_t stream);

// out [batch q_len, heads, dc] = causal softmax(scale (q_nope . c + q_pe . k_pe)) . c over
// cache [batch, cache_len, dc + dr]; q_nope [batch q_len, heads, dc], q_pe [.., dr];
// dc + dr <= kMlaMaxRow.
cudaError_t mla_attention(void* out, const void* q_nope, const void* q_pe, const void* cache, Elem elem, int64_t batch,
                          int64_t cache_len, int64_t q_len, int64_t q_start, int64_t heads, int64_t dc, int64_t dr,
                          float scale, cudaStream_t stream);

}  // namespace fk::cuda::launch
