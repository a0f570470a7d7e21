// Device helpers of the GEMV kernels (fused_moe_gemv.cu, linear_gemv.cu): a warp streams
// two weight rows once for a group of up to G input rows, 16 bytes a lane with
// kGemvUnroll<G> vectors of each weight row in flight, and sums in fp32 (nvcc only).
#pragma once

#include "kernels/cuda/ops/elem.cuh"

#include <cstdint>

namespace fk::cuda::gemv {

// Vectors of each weight row a lane loads before using them: fewer for more input rows
// at once, whose sums take the registers.
template <int G>
constexpr int kUnroll = G <= 2   ? 4
                        : G == 4 ? 2
                                 : 1;

// Sum over the 16 bytes of w times those of x, both holding 16 / sizeof(T) elements.
template <typename T>
__device__ __forceinline__ float dot16(const uint4& w, const uint4& x) {
  constexpr int n = 16 / sizeof(T);
  const T* a = reinterpret_cast<const T*>(&w);
  const T* b = reinterpret_cast<const T*>(&x);
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < n; ++i) s += dev::to_f32(a[i]) * dev::to_f32(b[i]);
  return s;
}

// acc[r][i] = weight row w[r] . input row x[i] over `vecs` 16-byte vectors for the first
// n of G input rows, every lane of the warp holding the whole sum (acc starts at zero).
// One loop with guarded loads, so that a short row (a few vectors a lane) still has all
// of them in flight at once.
template <typename T, int G>
__device__ __forceinline__ void rows_dot(const uint4* const (&w)[2], const uint4* const (&x)[G], int n, int64_t vecs,
                                         int lane, float (&acc)[2][G]) {
  for (int64_t v0 = lane; v0 < vecs; v0 += 32 * kUnroll<G>) {
    uint4 a[2][kUnroll<G>];
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int u = 0; u < kUnroll<G>; ++u) a[r][u] = v0 + 32 * u < vecs ? __ldg(w[r] + v0 + 32 * u) : uint4{};
#pragma unroll
    for (int i = 0; i < G; ++i) {
      if (i >= n) break;
#pragma unroll
      for (int u = 0; u < kUnroll<G>; ++u) {
        if (v0 + 32 * u >= vecs) break;
        const uint4 xv = __ldg(x[i] + v0 + 32 * u);
#pragma unroll
        for (int r = 0; r < 2; ++r) acc[r][i] += dot16<T>(a[r][u], xv);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < G; ++i) {
    if (i >= n) break;
#pragma unroll
    for (int r = 0; r < 2; ++r) acc[r][i] = dev::warp_sum(acc[r][i]);
  }
}

}  // namespace fk::cuda::gemv
