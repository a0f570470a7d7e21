// Device helpers shared by the CUDA baseline kernels (nvcc, C++17, no fk headers):
// element conversion to and from fp32, warp and block reductions, and the typed
// dispatch of launch::Elem. Every kernel accumulates in fp32 and rounds once on store.
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace fk::cuda::dev {

template <typename T> __device__ __forceinline__ float to_f32(T v);
template <> __device__ __forceinline__ float to_f32(float v) { return v; }
template <> __device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32(float v) { return v; }
template <> __device__ __forceinline__ __half from_f32(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum of `v` over the block; every thread gets the total. Call from all threads of
// the block (it synchronises); blockDim.x must be a multiple of 32, at most 1024.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  __shared__ float total;
  v = warp_sum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? partial[threadIdx.x] : 0.f;
  if (warp == 0) v = warp_sum(v);
  if (threadIdx.x == 0) total = v;
  __syncthreads();
  const float result = total;
  __syncthreads();  // partial/total may be reused by a second call
  return result;
}

// Max of `v` over the block, as block_sum.
__device__ __forceinline__ float block_max(float v) {
  __shared__ float partial[32];
  __shared__ float total;
  v = warp_max(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? partial[threadIdx.x] : -INFINITY;
  if (warp == 0) v = warp_max(v);
  if (threadIdx.x == 0) total = v;
  __syncthreads();
  const float result = total;
  __syncthreads();
  return result;
}

// Threads for a row kernel over `n` elements: a multiple of 32 in [32, 1024].
inline int row_threads(int64_t n) {
  if (n >= 1024) return 1024;
  return static_cast<int>((n + 31) / 32 * 32 < 32 ? 32 : (n + 31) / 32 * 32);
}

// The launch::Elem code of device type T (the inverse of FK_CUDA_DISPATCH_ELEM).
template <typename T>
inline constexpr launch::Elem elem_of = std::is_same_v<T, float>    ? launch::Elem::kF32
                                        : std::is_same_v<T, __half> ? launch::Elem::kF16
                                                                    : launch::Elem::kBF16;

}  // namespace fk::cuda::dev

// Calls F<T>::run(args...) with T the device type of `elem`; returns its cudaError_t.
#define FK_CUDA_DISPATCH_ELEM(elem, F, ...)                                   \
  [&]() -> cudaError_t {                                                     \
    switch (elem) {                                                          \
      case ::fk::cuda::launch::Elem::kF32: return F<float>::run(__VA_ARGS__);        \
      case ::fk::cuda::launch::Elem::kF16: return F<__half>::run(__VA_ARGS__);       \
      case ::fk::cuda::launch::Elem::kBF16: return F<__nv_bfloat16>::run(__VA_ARGS__); \
    }                                                                        \
    return cudaErrorInvalidValue;                                            \
  }()
