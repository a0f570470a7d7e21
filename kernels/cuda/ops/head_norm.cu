// CUDA baseline of head_norm: one warp per head of a row (a grid-stride loop over the
// tokens x heads pieces), lanes striding over the head's elements; the warp reduces the
// mean (LayerNorm) and the sum of squares by shuffles, then each lane writes its
// elements from the second read (an L1 hit). fp32 accumulation, one rounding per output,
// in the CPU baseline's order: (x - mean) * inv * w (+ b).
#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/head_norm_launch.h"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

constexpr int kThreads = 128;  // 4 warps, 4 heads a block

template <typename T, bool kLayer>
__global__ void head_norm_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ w,
                                 const T* __restrict__ b, int64_t pieces, int64_t n, int d, float eps) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x >> 5);
  for (int64_t p = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; p < pieces; p += warps) {
    const int64_t at = p * d, col = at % n;
    const T* xp = x + at;
    float mean = 0.f;
    if (kLayer) {
      float s = 0.f;
      for (int i = lane; i < d; i += 32) s += dev::to_f32(xp[i]);
      mean = dev::warp_sum(s) / static_cast<float>(d);
    }
    float ss = 0.f;
    for (int i = lane; i < d; i += 32) {
      const float v = dev::to_f32(xp[i]) - mean;
      ss += v * v;
    }
    const float inv = 1.f / sqrtf(dev::warp_sum(ss) / static_cast<float>(d) + eps);
    for (int i = lane; i < d; i += 32) {
      const float y = (dev::to_f32(xp[i]) - mean) * inv * dev::to_f32(w[col + i]);
      out[at + i] = dev::from_f32<T>(b != nullptr ? y + dev::to_f32(b[col + i]) : y);
    }
  }
}

template <typename T>
struct HeadNorm {
  static cudaError_t run(void* out, const void* x, const void* w, const void* b, int64_t rows, int64_t n, int64_t d,
                         bool layer, float eps, cudaStream_t stream) {
    if (rows <= 0 || n <= 0) return cudaSuccess;
    if (d <= 0 || d > INT32_MAX || n % d != 0 || (!layer && b != nullptr)) return cudaErrorInvalidValue;
    const int64_t pieces = rows * (n / d);
    const unsigned blocks = dev::grid_blocks(pieces, kThreads / 32);
    T* o = static_cast<T*>(out);
    const T* xp = static_cast<const T*>(x);
    const T* wp = static_cast<const T*>(w);
    const T* bp = static_cast<const T*>(b);
    if (layer)
      head_norm_kernel<T, true><<<blocks, kThreads, 0, stream>>>(o, xp, wp, bp, pieces, n, static_cast<int>(d), eps);
    else
      head_norm_kernel<T, false><<<blocks, kThreads, 0, stream>>>(o, xp, wp, bp, pieces, n, static_cast<int>(d), eps);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::head_norm(void* out, const void* x, const void* weight, const void* bias, Elem elem,
                              int64_t tokens, int64_t n, int64_t head_dim, bool layer, float eps,
                              cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, HeadNorm, out, x, weight, bias, tokens, n, head_dim, layer, eps, stream);
}

}  // namespace fk::cuda
