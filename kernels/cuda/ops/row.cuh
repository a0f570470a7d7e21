// Device helpers of the row and elementwise CUDA baselines (nvcc, C++17), beside
// elem.cuh: 16-byte packs of elements for vector loads, the alignment test that picks
// the vector or the scalar path, grid sizes, rows held in registers, the rms_norm
// family's pack arithmetic, and a first-index block argmax.
//
// A Pack<T, N> is only read or written through a pointer that is N * sizeof(T)
// aligned; callers test aligned16() on every base pointer and make every offset a
// multiple of N elements before taking the vector path.
#pragma once

#include "kernels/cuda/ops/elem.cuh"

#include <cstdint>
#include <type_traits>

namespace fk::cuda::dev {

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

// Elements of T in one 16-byte load.
template <typename T>
inline constexpr int kVec = static_cast<int>(16 / sizeof(T));

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Blocks for a grid-stride loop over `items` with `threads` per block (>= 1 when
// items > 0); capped so that huge problems loop instead of overflowing gridDim.x.
inline unsigned grid_blocks(int64_t items, int threads) {
  const int64_t want = (items + threads - 1) / threads;
  const int64_t cap = int64_t{1} << 16;
  return static_cast<unsigned>(want < 1 ? 1 : (want > cap ? cap : want));
}

// Blocks for a kernel that loops `for (row = blockIdx.x; row < rows; row += gridDim.x)`.
inline unsigned row_blocks(int64_t rows) {
  const int64_t cap = int64_t{1} << 30;
  return static_cast<unsigned>(rows < 1 ? 1 : (rows > cap ? cap : rows));
}

// Rows held in registers: a block of row_reg_threads(packs, R) threads takes one row,
// each thread R packs at p = threadIdx.x + i * blockDim.x (i < R; coalesced per i),
// all loaded before the block reduces, so a thread has R loads in flight and the row
// is read from memory once. R is the smallest of 1, 2, 4, 8 that keeps a block at
// kRowRegThreads threads or fewer; with_row_regs() gives 0 for rows longer than
// 8 x 1024 packs, which take the looping kernels.
inline constexpr int kRowRegThreads = 128;

inline int row_regs(int64_t packs) {
  for (int r = 1; r <= 8; r *= 2)
    if (packs <= int64_t{kRowRegThreads} * r) return r;
  return packs <= int64_t{1024} * 8 ? 8 : 0;
}

inline int row_reg_threads(int64_t packs, int regs) {
  const int64_t t = (packs + regs - 1) / regs;
  return static_cast<int>(t <= 32 ? 32 : (t + 31) / 32 * 32);
}

// Calls f(std::integral_constant<int, R>{}) with R = row_regs(packs); returns its
// result, or `fallback()` when the row does not fit (R = 0).
template <typename F, typename G>
inline auto with_row_regs(int64_t packs, F&& f, G&& fallback) {
  switch (row_regs(packs)) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    default: return fallback();
  }
}

// ss plus the squares of a pack's elements, added one by one (fp32).
template <typename T, int N>
__device__ __forceinline__ float add_squares(float ss, const Pack<T, N>& a) {
#pragma unroll
  for (int k = 0; k < N; ++k) {
    const float v = to_f32(a.v[k]);
    ss += v * v;
  }
  return ss;
}

// z <- x + z element by element in fp32, rounded to T (fused_add_rms_norm's residual).
template <typename T, int N>
__device__ __forceinline__ void add_into(const Pack<T, N>& x, Pack<T, N>& z) {
#pragma unroll
  for (int k = 0; k < N; ++k) z.v[k] = from_f32<T>(to_f32(x.v[k]) + to_f32(z.v[k]));
}

// a * inv * w, element by element in fp32, rounded to T: the normalised pack of the
// rms_norm family.
template <typename T, int N>
__device__ __forceinline__ Pack<T, N> scale_pack(const Pack<T, N>& a, const Pack<T, N>& w, float inv) {
  Pack<T, N> o;
#pragma unroll
  for (int k = 0; k < N; ++k) o.v[k] = from_f32<T>(to_f32(a.v[k]) * inv * to_f32(w.v[k]));
  return o;
}

// Stores scale_pack(a[i], w[p], inv) at out[p] for the R packs a thread of a
// row_regs block holds (p = threadIdx.x + i * blockDim.x < packs).
template <typename T, int N, int R>
__device__ __forceinline__ void row_regs_store_scaled(Pack<T, N>* out, const Pack<T, N> (&a)[R],
                                                      const Pack<T, N>* w, float inv, int packs) {
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int p = threadIdx.x + i * blockDim.x;
    if (p < packs) out[p] = scale_pack(a[i], w[p], inv);
  }
}

// (v, i) beats (bv, bi) when larger, or equal with a smaller index: the first index
// of the maximum. NaN never beats anything; the sentinel is (-inf, INT64_MAX).
__device__ __forceinline__ bool argmax_better(float v, int64_t i, float bv, int64_t bi) {
  return v > bv || (v == bv && i < bi);
}

// First-index argmax of (v, i) over the block; every thread gets the winner's index
// (INT64_MAX when no thread holds a candidate). Call from all threads of the block;
// blockDim.x must be a multiple of 32, at most 1024.
__device__ __forceinline__ int64_t block_argmax(float v, int64_t i) {
  __shared__ float pv[32];
  __shared__ int64_t pi[32];
  __shared__ int64_t total;
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, o);
    const int64_t oi = __shfl_xor_sync(0xffffffffu, i, o);
    if (argmax_better(ov, oi, v, i)) v = ov, i = oi;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) pv[warp] = v, pi[warp] = i;
  __syncthreads();
  if (warp == 0) {
    const int warps = (blockDim.x + 31) >> 5;
    v = lane < warps ? pv[lane] : -INFINITY;
    i = lane < warps ? pi[lane] : INT64_MAX;
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, v, o);
      const int64_t oi = __shfl_xor_sync(0xffffffffu, i, o);
      if (argmax_better(ov, oi, v, i)) v = ov, i = oi;
    }
    if (lane == 0) total = i;
  }
  __syncthreads();
  const int64_t result = total;
  __syncthreads();
  return result;
}

}  // namespace fk::cuda::dev
