// The GEMV form of the CUDA linear baseline, for a few input rows (a decode step's
// tokens): out[m, n] = x[m, k] @ w[n, k]^T (+ bias[n]) with m <= kLinearGemvMaxRows.
// Warp q of the grid takes weight rows 2q and 2q + 1 and streams each once for all m
// input rows (gemv.cuh: 16 bytes a lane, several vectors in flight, fp32 dot products,
// a warp sum); lane 0 adds the bias in fp32 and rounds once to the element type, as
// cuBLASLt's bias epilogue does. LinearLt times it beside cuBLASLt's configurations and
// keeps it where it is faster (linear_lt.h).
#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/gemv.cuh"
#include "kernels/cuda/ops/linear_launch.h"

#include <climits>

namespace fk::cuda {
namespace {

constexpr int kWarps = 8, kThreads = kWarps * 32;

// G: the input rows held at once (m rounded up to 1, 2 or 4).
template <typename T, int G>
__global__ void __launch_bounds__(kThreads, 2)
    linear_gemv_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ w,
                       const T* __restrict__ bias, int m, int64_t n, int64_t k) {
  const int lane = threadIdx.x & 31;
  const int64_t unit = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  const int64_t row0 = 2 * unit;
  if (row0 >= n) return;
  const bool two = row0 + 1 < n;  // an odd n leaves the last warp one row: it reads it twice
  const int64_t row1 = two ? row0 + 1 : row0, vecs = k * static_cast<int64_t>(sizeof(T)) / 16;
  const uint4* const wr[2] = {reinterpret_cast<const uint4*>(w + row0 * k),
                              reinterpret_cast<const uint4*>(w + row1 * k)};
  const uint4* xr[G];
#pragma unroll
  for (int i = 0; i < G; ++i) xr[i] = reinterpret_cast<const uint4*>(x + (i < m ? i : 0) * k);
  float acc[2][G] = {};
  gemv::rows_dot<T, G>(wr, xr, m, vecs, lane, acc);
  if (lane != 0) return;
  const float b0 = bias ? dev::to_f32(bias[row0]) : 0.f, b1 = bias ? dev::to_f32(bias[row1]) : 0.f;
#pragma unroll
  for (int i = 0; i < G; ++i) {
    if (i >= m) break;
    out[i * n + row0] = dev::from_f32<T>(acc[0][i] + b0);
    if (two) out[i * n + row1] = dev::from_f32<T>(acc[1][i] + b1);
  }
}

template <typename T>
struct LinearGemv {
  static cudaError_t run(void* out, const void* x, const void* w, const void* bias, int64_t m, int64_t n, int64_t k,
                         cudaStream_t stream) {
    const auto blocks = static_cast<unsigned>((n + 2 * kWarps - 1) / (2 * kWarps));
    const auto args = [&](auto kernel) {
      kernel<<<blocks, kThreads, 0, stream>>>(static_cast<T*>(out), static_cast<const T*>(x), static_cast<const T*>(w),
                                              static_cast<const T*>(bias), static_cast<int>(m), n, k);
    };
    if (m == 1)
      args(linear_gemv_kernel<T, 1>);
    else if (m == 2)
      args(linear_gemv_kernel<T, 2>);
    else
      args(linear_gemv_kernel<T, 4>);
    return cudaGetLastError();
  }
};

}  // namespace

bool launch::linear_gemv_fits(Elem elem, int64_t m, int64_t n, int64_t k, const void* x, const void* w) {
  const int64_t vec = elem == Elem::kF32 ? 4 : 8;  // elements in 16 bytes
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return m > 0 && m <= kLinearGemvMaxRows && n > 0 && k > 0 && k % vec == 0 && aligned(x) && aligned(w) &&
         (n + 2 * 8 - 1) / (2 * 8) <= INT_MAX;
}

cudaError_t launch::linear_gemv(void* out, const void* x, const void* w, const void* bias, Elem elem, int64_t m,
                                int64_t n, int64_t k, cudaStream_t stream) {
  if (!linear_gemv_fits(elem, m, n, k, x, w)) return cudaErrorInvalidValue;
  return FK_CUDA_DISPATCH_ELEM(elem, LinearGemv, out, x, w, bias, m, n, k, stream);
}

}  // namespace fk::cuda
