// Tensor-core helpers of the attention kernels (nvcc, C++17, sm_80+): mma.sync
// m16n8k16 with fp32 accumulators for fp16/bf16, the pack of two fp32 values into one
// register of the element type, and ldmatrix loads of 8x8 b16 tiles from shared
// memory (four at once, plain or transposed); the online-softmax and P V steps of a
// key tile that the flash and decode kernels share.
//
// Fragment layouts are PTX's (m16n8k16 .row.col): for accumulators c[4] of a 16x8
// tile, lane l holds rows l / 4 (c[0], c[1]) and l / 4 + 8 (c[2], c[3]), columns
// (l % 4) * 2 and + 1. Every lane of the warp must execute each call (.aligned).
#pragma once

#include "kernels/cuda/ops/cp_async.cuh"
#include "kernels/cuda/ops/elem.cuh"

#include <cstdint>

namespace fk::cuda::dev {

// Mma<T>::run(c, a, b0, b1): c += A B for T = __nv_bfloat16 (PTX bf16) and __half (f16).
template <typename T>
struct Mma;
#define FK_DEV_MMA(T, PTX, PACK2, VEC2)                                                                     \
  template <>                                                                                             \
  struct Mma<T> {                                                                                         \
    __device__ __forceinline__ static void run(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) { \
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." PTX "." PTX                                   \
                   ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                          \
                   : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                       \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));                       \
    }                                                                                                     \
    __device__ __forceinline__ static uint32_t pack(float lo, float hi) {                                 \
      const VEC2 v = PACK2(lo, hi);                                                                       \
      return *reinterpret_cast<const uint32_t*>(&v);                                                      \
    }                                                                                                     \
  };
FK_DEV_MMA(__nv_bfloat16, "bf16", __floats2bfloat162_rn, __nv_bfloat162)
FK_DEV_MMA(__half, "f16", __floats2half2_rn, __half2)
#undef FK_DEV_MMA

__device__ __forceinline__ void ldsm_x4(uint32_t r[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldsm_x4_trans(uint32_t r[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// One key tile of the online softmax (FlashAttention-2, log2 domain) over the two rows
// of an m16 tile this thread holds (lane / 4 and lane / 4 + 8): s[n][half * 2 + c] is
// the raw score of key column n * 8 + (lane % 4) * 2 + c. Scales the scores (soft-caps
// them when softcap > 0), gives -inf to the columns outside [lo[half], hi[half]),
// updates the running max m and sum l (over the 4 lanes of a row), turns s into the
// tile's probabilities exp2(x - m) and rescales the accumulators o by the change of m.
template <int NB, int NO>
__device__ __forceinline__ void online_softmax_tile(float (&s)[NB][4], float (&o)[NO][4], float (&m)[2], float (&l)[2],
                                                    const int (&lo)[2], const int (&hi)[2], float scale,
                                                    float softcap) {
  constexpr float kLog2e = 1.4426950408889634f;
  const float scale_log2 = scale * kLog2e;
  const int lane = threadIdx.x % 32;
  float alpha[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const bool whole = lo[half] == 0 && hi[half] == NB * 8;
    float mx = -INFINITY;
#pragma unroll
    for (int n = 0; n < NB; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int jj = n * 8 + (lane % 4) * 2 + c;
        float v = s[n][half * 2 + c];
        if (softcap > 0.f) {
          v *= scale;
          v = softcap * tanhf(v / softcap) * kLog2e;
        } else {
          v *= scale_log2;
        }
        if (!whole && (jj < lo[half] || jj >= hi[half])) v = -INFINITY;
        s[n][half * 2 + c] = v;
        mx = fmaxf(mx, v);
      }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m[half], mx);
    const float base = m_new == -INFINITY ? 0.f : m_new;  // a row with no visible key yet
    alpha[half] = exp2f(m[half] - base);
    float sum = 0.f;
#pragma unroll
    for (int n = 0; n < NB; ++n)
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const float pv = exp2f(s[n][half * 2 + c] - base);
        s[n][half * 2 + c] = pv;
        sum += pv;
      }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    l[half] = l[half] * alpha[half] + sum;
    m[half] = m_new;
  }
#pragma unroll
  for (int n = 0; n < NO; ++n) {
    o[n][0] *= alpha[0];
    o[n][1] *= alpha[0];
    o[n][2] *= alpha[1];
    o[n][3] *= alpha[1];
  }
}

// o += P V for one key tile: P is the tile's probabilities s (online_softmax_tile's,
// rounded to T), V the tile's BK rows of DP elements at v_tile, LD elements apart in
// shared memory.
template <typename T, int BK, int DP, int LD>
__device__ __forceinline__ void accumulate_pv(float (&o)[DP / 8][4], const float (&s)[BK / 8][4], const T* v_tile) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kk = 0; kk < BK / 16; ++kk) {
    uint32_t a[4];
    a[0] = Mma<T>::pack(s[2 * kk][0], s[2 * kk][1]);
    a[1] = Mma<T>::pack(s[2 * kk][2], s[2 * kk][3]);
    a[2] = Mma<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    a[3] = Mma<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
    for (int n2 = 0; n2 < DP / 16; ++n2) {
      uint32_t bv[4];
      ldsm_x4_trans(bv, v_tile + (kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * LD + n2 * 16 + (lane / 16) * 8);
      Mma<T>::run(o[2 * n2], a, bv[0], bv[1]);
      Mma<T>::run(o[2 * n2 + 1], a, bv[2], bv[3]);
    }
  }
}

}  // namespace fk::cuda::dev
