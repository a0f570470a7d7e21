// The attention problem shared by the CUDA attention kernels (nvcc, C++17): one
// Geometry value describes a call of launch::attention (see attention_launch.h), and
// the three kernels that may run it are declared here. attention.cu picks one:
//   - attention_decode (attention_decode.cu): one query position per sequence
//     (q_len == 1), split over the keys (split-KV) so that every SM streams K/V;
//   - attention_flash (attention_flash.cu): fp16/bf16 tensor-core tiles (mma.sync,
//     fp32 accumulators, online softmax) for prefill and every other q_len;
//   - the general kernel in attention.cu (fp32 data, odd head sizes, old devices).
// Each *_fits() says whether its kernel takes the call; a kernel that fits returns
// only launch errors.
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda {

struct AttentionGeometry {
  int64_t batch, cache_len, q_len, q_start, q_heads, kv_heads, group, rows;
  int d;
  float scale, softcap;
  bool causal;
  int64_t window;
  // Keys [first_key(p), end_key(p)) are visible to a query at position p; both are
  // monotone in p.
  __host__ __device__ int64_t first_key(int64_t p) const {
    return causal && window > 0 ? (p - window + 1 > 0 ? p - window + 1 : 0) : 0;
  }
  __host__ __device__ int64_t end_key(int64_t p) const { return causal ? p + 1 : q_start + q_len; }
};

// Facts of the current device the kernels size their grids by (cached per device).
struct AttentionDevice {
  int sms = 0, major = 0;
};
AttentionDevice attention_device();

bool attention_decode_fits(const void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                           const AttentionGeometry& g);
cudaError_t attention_decode(void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                             const AttentionGeometry& g, cudaStream_t stream);

bool attention_flash_fits(const void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                          const AttentionGeometry& g);
cudaError_t attention_flash(void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                            const AttentionGeometry& g, cudaStream_t stream);

}  // namespace fk::cuda
