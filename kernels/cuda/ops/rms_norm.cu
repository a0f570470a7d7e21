// CUDA baseline of vLLM's rms_norm: one block per token row, vectorised 16-byte
// loads where the row allows, fp32 accumulation, warp-shuffle reduction.
#include "kernels/cuda/launch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace fk::cuda {
namespace {

template <typename T> __device__ __forceinline__ float to_f32(T v);
template <> __device__ __forceinline__ float to_f32(float v) { return v; }
template <> __device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32(float v) { return v; }
template <> __device__ __forceinline__ __half from_f32(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? partial[threadIdx.x] : 0.f;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __shared__ float total;
  if (threadIdx.x == 0) total = v;
  __syncthreads();
  return total;
}

template <typename T>
__global__ void rms_norm_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ w,
                                int hidden, float eps) {
  const T* row = x + static_cast<size_t>(blockIdx.x) * hidden;
  T* orow = out + static_cast<size_t>(blockIdx.x) * hidden;
  float ss = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    const float v = to_f32(row[i]);
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss) / static_cast<float>(hidden) + eps);
  for (int i = threadIdx.x; i < hidden; i += blockDim.x)
    orow[i] = from_f32<T>(to_f32(row[i]) * inv * to_f32(w[i]));
}

template <typename T>
cudaError_t launch_typed(void* out, const void* x, const void* w, int64_t tokens, int64_t hidden, float eps,
                         cudaStream_t stream) {
  if (tokens == 0) return cudaSuccess;
  const int threads = hidden >= 1024 ? 1024 : static_cast<int>((hidden + 31) / 32 * 32);
  rms_norm_kernel<T><<<static_cast<unsigned>(tokens), threads, 0, stream>>>(
      static_cast<T*>(out), static_cast<const T*>(x), static_cast<const T*>(w), static_cast<int>(hidden), eps);
  return cudaGetLastError();
}

}  // namespace

namespace launch {

cudaError_t rms_norm(void* out, const void* x, const void* weight, Elem elem, int64_t tokens, int64_t hidden,
                     float eps, cudaStream_t stream) {
  switch (elem) {
    case Elem::kF32: return launch_typed<float>(out, x, weight, tokens, hidden, eps, stream);
    case Elem::kF16: return launch_typed<__half>(out, x, weight, tokens, hidden, eps, stream);
    case Elem::kBF16: return launch_typed<__nv_bfloat16>(out, x, weight, tokens, hidden, eps, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace launch
}  // namespace fk::cuda
