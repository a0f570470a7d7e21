// Tensor-core helpers of the attention kernels (nvcc, C++17, sm_80+): mma.sync
// m16n8k16 with fp32 accumulators for fp16/bf16, the pack of two fp32 values into one
// register of the element type, and ldmatrix loads of 8x8 b16 tiles from shared
// memory (four at once, plain or transposed).
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

}  // namespace fk::cuda::dev
