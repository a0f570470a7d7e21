// CUDA baseline of vLLM's rms_norm: one block per token row, fp32 accumulation,
// warp-shuffle block reduction; the row is read twice (the second read hits L1/L2).
#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/rms_norm_launch.h"

namespace fk::cuda {
namespace {

template <typename T>
__global__ void rms_norm_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ w,
                                int hidden, float eps) {
  const T* row = x + static_cast<size_t>(blockIdx.x) * hidden;
  T* orow = out + static_cast<size_t>(blockIdx.x) * hidden;
  float ss = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    const float v = dev::to_f32(row[i]);
    ss += v * v;
  }
  const float inv = rsqrtf(dev::block_sum(ss) / static_cast<float>(hidden) + eps);
  for (int i = threadIdx.x; i < hidden; i += blockDim.x)
    orow[i] = dev::from_f32<T>(dev::to_f32(row[i]) * inv * dev::to_f32(w[i]));
}

template <typename T>
struct RmsNorm {
  static cudaError_t run(void* out, const void* x, const void* w, int64_t tokens, int64_t hidden, float eps,
                         cudaStream_t stream) {
    if (tokens == 0) return cudaSuccess;
    rms_norm_kernel<T><<<static_cast<unsigned>(tokens), dev::row_threads(hidden), 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(x), static_cast<const T*>(w), static_cast<int>(hidden), eps);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::rms_norm(void* out, const void* x, const void* weight, Elem elem, int64_t tokens,
                             int64_t hidden, float eps, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, RmsNorm, out, x, weight, tokens, hidden, eps, stream);
}

}  // namespace fk::cuda
