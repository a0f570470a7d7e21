// CUDA baseline of vLLM's rms_norm: one block per token row, over 16-byte packs when
// hidden and every pointer allow it, else over single elements; fp32 accumulation,
// warp-shuffle block reduction. Rows of up to 8 x 1024 packs (hidden 65536 in bf16)
// are held in registers (row.cuh's row_regs): each thread loads its packs of x and the
// weight at once, the block reduces, and the thread writes from its registers, so x
// is read once. Longer rows loop, and the second pass re-reads the packs the same
// thread read (L1/L2 hits).
#include "kernels/cuda/ops/rms_norm_launch.h"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

template <typename T, int N>
__global__ void rms_norm_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ w, int64_t rows,
                                int packs, float hidden, float eps) {
  using P = dev::Pack<T, N>;
  const P* wp = reinterpret_cast<const P*>(w);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const P* xr = reinterpret_cast<const P*>(x) + r * packs;
    P* orow = reinterpret_cast<P*>(out) + r * packs;
    float ss = 0.f;
    for (int p = threadIdx.x; p < packs; p += blockDim.x) ss = dev::add_squares(ss, xr[p]);
    const float inv = 1.f / sqrtf(dev::block_sum(ss) / hidden + eps);
    for (int p = threadIdx.x; p < packs; p += blockDim.x) orow[p] = dev::scale_pack(xr[p], wp[p], inv);
  }
}

template <typename T, int N, int R>
__global__ void rms_norm_regs_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ w,
                                     int64_t rows, int packs, float hidden, float eps) {
  using P = dev::Pack<T, N>;
  const P* wp = reinterpret_cast<const P*>(w);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const P* xr = reinterpret_cast<const P*>(x) + r * packs;
    P a[R];
    float ss = 0.f;
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int p = threadIdx.x + i * blockDim.x;
      if (p < packs) a[i] = xr[p];
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
      if (threadIdx.x + i * blockDim.x < packs) ss = dev::add_squares(ss, a[i]);
    const float inv = 1.f / sqrtf(dev::block_sum(ss) / hidden + eps);
    dev::row_regs_store_scaled(reinterpret_cast<P*>(out) + r * packs, a, wp, inv, packs);
  }
}

template <typename T, int N>
cudaError_t launch_with(void* out, const void* x, const void* w, int64_t rows, int64_t hidden, float eps,
                        cudaStream_t stream) {
  const int packs = static_cast<int>(hidden / N);
  T* o = static_cast<T*>(out);
  const T* xp = static_cast<const T*>(x);
  const T* wp = static_cast<const T*>(w);
  const float hf = static_cast<float>(hidden);
  return dev::with_row_regs(
      packs,
      [&](auto regs) {
        constexpr int R = decltype(regs)::value;
        rms_norm_regs_kernel<T, N, R><<<dev::row_blocks(rows), dev::row_reg_threads(packs, R), 0, stream>>>(
            o, xp, wp, rows, packs, hf, eps);
        return cudaGetLastError();
      },
      [&] {
        rms_norm_kernel<T, N><<<dev::row_blocks(rows), dev::row_threads(packs), 0, stream>>>(o, xp, wp, rows, packs,
                                                                                           hf, eps);
        return cudaGetLastError();
      });
}

template <typename T>
struct RmsNorm {
  static cudaError_t run(void* out, const void* x, const void* w, int64_t tokens, int64_t hidden, float eps,
                         cudaStream_t stream) {
    if (tokens <= 0 || hidden <= 0) return cudaSuccess;
    if (hidden > INT32_MAX) return cudaErrorInvalidValue;
    constexpr int V = dev::kVec<T>;
    if (hidden % V == 0 && dev::aligned16(out) && dev::aligned16(x) && dev::aligned16(w))
      return launch_with<T, V>(out, x, w, tokens, hidden, eps, stream);
    return launch_with<T, 1>(out, x, w, tokens, hidden, eps, stream);
  }
};

}  // namespace

cudaError_t launch::rms_norm(void* out, const void* x, const void* weight, Elem elem, int64_t tokens,
                             int64_t hidden, float eps, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, RmsNorm, out, x, weight, tokens, hidden, eps, stream);
}

}  // namespace fk::cuda
