// CUDA baseline of vLLM's fused_add_rms_norm: one block per token row, over 16-byte
// packs when hidden and every pointer allow it, else over single elements. The sum is
// rounded to the element type and stored in residual before it is squared (as the CPU
// baseline). Rows of up to 8 x 1024 packs are held in registers (row.cuh's row_regs):
// x and the residual are read once, the sum stays in the thread's registers until the
// block has reduced. Longer rows loop, and the second pass re-reads the residual the
// same thread wrote, so no other thread's write is needed.
#include "kernels/cuda/ops/fused_add_rms_norm_launch.h"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

template <typename T, int N>
__global__ void fused_add_rms_norm_kernel(T* x, T* res, const T* __restrict__ w, int64_t rows, int packs,
                                          float hidden, float eps) {
  using P = dev::Pack<T, N>;
  const P* wp = reinterpret_cast<const P*>(w);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    P* xr = reinterpret_cast<P*>(x) + r * packs;
    P* rr = reinterpret_cast<P*>(res) + r * packs;
    float ss = 0.f;
    for (int p = threadIdx.x; p < packs; p += blockDim.x) {
      P z = rr[p];
      dev::add_into(xr[p], z);
      ss = dev::add_squares(ss, z);
      rr[p] = z;
    }
    const float inv = 1.f / sqrtf(dev::block_sum(ss) / hidden + eps);
    for (int p = threadIdx.x; p < packs; p += blockDim.x) xr[p] = dev::scale_pack(rr[p], wp[p], inv);
  }
}

template <typename T, int N, int R>
__global__ void fused_add_rms_norm_regs_kernel(T* x, T* res, const T* __restrict__ w, int64_t rows, int packs,
                                               float hidden, float eps) {
  using P = dev::Pack<T, N>;
  const P* wp = reinterpret_cast<const P*>(w);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    P* xr = reinterpret_cast<P*>(x) + r * packs;
    P* rr = reinterpret_cast<P*>(res) + r * packs;
    P a[R], z[R];
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int p = threadIdx.x + i * blockDim.x;
      if (p < packs) a[i] = xr[p], z[i] = rr[p];
    }
    float ss = 0.f;
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int p = threadIdx.x + i * blockDim.x;
      if (p >= packs) continue;
      dev::add_into(a[i], z[i]);
      ss = dev::add_squares(ss, z[i]);
      rr[p] = z[i];
    }
    const float inv = 1.f / sqrtf(dev::block_sum(ss) / hidden + eps);
    dev::row_regs_store_scaled(xr, z, wp, inv, packs);
  }
}

template <typename T, int N>
cudaError_t launch_with(void* x, void* res, const void* w, int64_t rows, int64_t hidden, float eps,
                        cudaStream_t stream) {
  const int packs = static_cast<int>(hidden / N);
  T* xp = static_cast<T*>(x);
  T* rp = static_cast<T*>(res);
  const T* wp = static_cast<const T*>(w);
  const float hf = static_cast<float>(hidden);
  return dev::with_row_regs(
      packs,
      [&](auto regs) {
        constexpr int R = decltype(regs)::value;
        fused_add_rms_norm_regs_kernel<T, N, R>
            <<<dev::row_blocks(rows), dev::row_reg_threads(packs, R), 0, stream>>>(xp, rp, wp, rows, packs, hf, eps);
        return cudaGetLastError();
      },
      [&] {
        fused_add_rms_norm_kernel<T, N><<<dev::row_blocks(rows), dev::row_threads(packs), 0, stream>>>(
            xp, rp, wp, rows, packs, hf, eps);
        return cudaGetLastError();
      });
}

template <typename T>
struct FusedAddRmsNorm {
  static cudaError_t run(void* x, void* res, const void* w, int64_t rows, int64_t hidden, float eps,
                         cudaStream_t stream) {
    if (rows <= 0 || hidden <= 0) return cudaSuccess;
    if (hidden > INT32_MAX) return cudaErrorInvalidValue;
    constexpr int V = dev::kVec<T>;
    if (hidden % V == 0 && dev::aligned16(x) && dev::aligned16(res) && dev::aligned16(w))
      return launch_with<T, V>(x, res, w, rows, hidden, eps, stream);
    return launch_with<T, 1>(x, res, w, rows, hidden, eps, stream);
  }
};

}  // namespace

cudaError_t launch::fused_add_rms_norm(void* input, void* residual, const void* weight, Elem elem, int64_t tokens,
                                       int64_t hidden, float eps, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, FusedAddRmsNorm, input, residual, weight, tokens, hidden, eps, stream);
}

}  // namespace fk::cuda
