// The attention problem shared by the CUDA attention kernels (nvcc, C++17): one
// Geometry value describes a call of launch::attention (see attention_launch.h), and
// the four kernels that may run it are declared here. attention.cu picks one:
//   - attention_decode_mma (attention_decode_mma.cu): one query position per
//     sequence (q_len == 1), fp16/bf16 tensor-core tiles of a group's heads, split
//     over the keys (split-KV, attention_split.cu) so that every SM streams K/V;
//   - attention_decode (attention_decode.cu): the same on CUDA cores, for fp32, odd
//     head sizes and groups of more than 16 heads;
//   - attention_flash (attention_flash.cu): fp16/bf16 tensor-core tiles (mma.sync,
//     fp32 accumulators, online softmax) for prefill and every other q_len;
//   - the general kernel in attention.cu (fp32 data, odd head sizes, old devices).
// Each *_fits() says whether its kernel takes the call; a kernel that fits returns
// only launch errors.
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <type_traits>

namespace fk::cuda {

struct AttentionGeometry {
  int64_t batch, cache_len, q_len, q_start, q_heads, kv_heads, group, rows;
  int d;
  float scale, softcap;
  bool causal;
  int64_t window;
  // Per query head, a score every row also counts in its softmax's denominator (gpt-oss'
  // attention sinks; device fp32 [q_heads]), or null.
  const float* sinks;
  // Keys a bidirectional query sees: q_start + q_len (self-attention: the keys cached
  // so far), or every key of the encoder's (cross_attention).
  int64_t kv_end;
  // Keys [first_key(p), end_key(p)) are visible to a query at position p; both are
  // monotone in p. Causal: [p - window + 1, p] (window > 0) or [0, p]; bidirectional:
  // (p - window, p + window) (window > 0) or every key below kv_end.
  __host__ __device__ int64_t first_key(int64_t p) const {
    return window > 0 ? (p - window + 1 > 0 ? p - window + 1 : 0) : 0;
  }
  __host__ __device__ int64_t end_key(int64_t p) const {
    if (causal) return p + 1;
    return window > 0 && p + window < kv_end ? p + window : kv_end;
  }
};

// The sink's share of the softmax denominator of a row of query head h whose running
// max is m, relative to m: exp(sinks[h] - m), m in the natural-log domain (scaled
// scores); 0 without sinks. A kernel that keeps its max in the log2 domain passes
// m * ln 2. A row that saw no key (m = -inf) gets 0 too: its output stays 0.
__device__ __forceinline__ float attention_sink_share(const AttentionGeometry& g, int64_t h, float m) {
  if (g.sinks == nullptr || m == -INFINITY) return 0.f;
  return expf(g.sinks[h] - m);
}

// Facts of the current device the kernels size their grids by (cached per device).
struct AttentionDevice {
  int sms = 0, major = 0;
};
AttentionDevice attention_device();

// The tensor-core kernels' types: calls f(T{}, std::integral_constant<int, DP>{}) with
// T the 16-bit element type of `elem` (__nv_bfloat16 or __half) and DP the head size
// d <= 256 padded to 64, 128 or 256; fp32 gives cudaErrorInvalidValue.
template <typename F>
inline cudaError_t with_tensor_core_types(launch::Elem elem, int d, F&& f) {
  const auto padded = [&](auto t) {
    if (d <= 64) return f(t, std::integral_constant<int, 64>{});
    if (d <= 128) return f(t, std::integral_constant<int, 128>{});
    return f(t, std::integral_constant<int, 256>{});
  };
  if (elem == launch::Elem::kBF16) return padded(__nv_bfloat16{});
  if (elem == launch::Elem::kF16) return padded(__half{});
  return cudaErrorInvalidValue;
}

// Every tensor of the call is 16-byte aligned (cp.async and vector loads).
inline bool attention_aligned16(const void* out, const void* q, const void* kc, const void* vc) {
  const auto a = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; };
  return a(out) && a(q) && a(kc) && a(vc);
}

// Split-KV decode (attention_split.cu). A plan: base_blocks blocks a split, resident
// of which the device holds at once, splits in whole tiles of tile_keys keys.
struct DecodeSplit {
  int64_t splits, chunk;  // keys per split (the last may have fewer)
};
struct DecodeSplitPlan {
  int64_t base_blocks, resident, tile_keys;
};
// The fewest splits whose blocks fill at least 90% of the waves they take (else the
// best filling), each at least 64 keys.
DecodeSplit attention_split_for(const AttentionGeometry& g, const DecodeSplitPlan& plan);
// Once per kernel and device: lets `kernel` take dynamic_smem bytes of shared memory;
// *resident = the blocks of `threads` threads the device holds at once (>= 1).
cudaError_t attention_resident_blocks(const void* kernel, int threads, size_t dynamic_smem, int64_t* resident);
// Launches one split kernel: part_o and part_ml are null when there is one split
// (the kernel then writes the output), else the workspace of the partials.
using DecodeLaunch = std::function<cudaError_t(float* part_o, float* part_ml, const DecodeSplit& sp)>;
// Chooses the split, runs `run`, and with several splits merges their partials into
// `out` (stream-ordered workspace: capturable in a CUDA graph).
cudaError_t attention_decode_split(void* out, launch::Elem elem, const AttentionGeometry& g,
                                   const DecodeSplitPlan& plan, cudaStream_t stream, const DecodeLaunch& run);

// Tensor-core decode (attention_decode_mma.cu): fp16/bf16, groups of up to 16 heads.
bool attention_decode_mma_fits(const void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                               const AttentionGeometry& g);
cudaError_t attention_decode_mma(void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                                 const AttentionGeometry& g, cudaStream_t stream);

bool attention_decode_fits(const void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                           const AttentionGeometry& g);
cudaError_t attention_decode(void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                             const AttentionGeometry& g, cudaStream_t stream);

bool attention_flash_fits(const void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                          const AttentionGeometry& g);
cudaError_t attention_flash(void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                            const AttentionGeometry& g, cudaStream_t stream);

}  // namespace fk::cuda
