// The GEMV form of the CUDA fused_moe baseline (fused_moe.cuh, moe::gemv_experts): for
// a few (token, slot) pairs, as in a decode step, where the grouped GEMMs' routing,
// tiles and tensor-core fragments cost more than the weights take to stream. No routing
// pass: the block of pair p (blockIdx.y) works only if p is the first pair of its
// expert; it then collects the expert's pairs (in pair order, warp ballots over the ids)
// and each warp streams its two weight rows once per group of kGemvGroup pairs
// (gemv.cuh: 16 bytes a lane, several vectors in flight, fp32 dot products, a warp sum).
//   gate/up: warp j has w13[e] rows j (gate) and I + j (up); mid[pair, j] =
//            round(gated(gate, up)) (moe::gated: the CPU baseline's one rounding);
//   down:    warp q has w2[e] rows 2q and 2q + 1; y[pair, row] in fp32.
// The caller's combine then sums the slots in order (fused_moe.cu).
#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/fused_moe.cuh"
#include "kernels/cuda/ops/gemv.cuh"

#include <climits>

namespace fk::cuda::moe {
namespace {

constexpr int kWarps = 8, kThreads = kWarps * 32;
// The pairs of blockIdx.y's expert into `list` (pair order) and their count, when
// blockIdx.y is the expert's first pair; 0 otherwise (another block has the expert, or
// its id is out of range). Every thread gets the count.
__device__ int expert_pairs(const int32_t* __restrict__ ids, int pairs, int experts, int32_t* list) {
  __shared__ int count;
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x, p0 = blockIdx.y;
    const int32_t e = ids[p0];
    int n = 0;
    bool lead = e >= 0 && e < experts;
    for (int base = 0; lead && base < pairs; base += 32) {
      const int q = base + lane;
      const unsigned mask = __ballot_sync(0xffffffffu, q < pairs && ids[q] == e);
      const unsigned below = base >= p0 ? 0u : p0 - base >= 32 ? 0xffffffffu : (1u << (p0 - base)) - 1u;
      if ((mask & below) != 0u) lead = false;
      if (lead && ((mask >> lane) & 1u)) list[n + __popc(mask & ((1u << lane) - 1u))] = q;
      n += __popc(mask);
    }
    if (lane == 0) count = lead ? n : 0;
  }
  __syncthreads();
  return count;
}

// One warp's rows against n <= G pairs (`pairs`, their indices) of expert e: gated, row0
// is column j of mid; down, rows row0 and row1 of y.
template <typename T, bool kGated, int G>
__device__ __forceinline__ void rows_for_pairs(const GemvExperts& g, const uint4* const (&w)[2], const int32_t* pairs,
                                               int n, int64_t e, int64_t row0, int64_t row1, int64_t vecs, int lane) {
  const uint4* x[G];
#pragma unroll
  for (int i = 0; i < G; ++i) {
    const int64_t pair = i < n ? pairs[i] : 0;
    const T* row =
        kGated ? static_cast<const T*>(g.x) + pair / g.topk * g.hidden : static_cast<const T*>(g.mid) + pair * g.inter;
    x[i] = reinterpret_cast<const uint4*>(row);
  }
  float acc[2][G] = {};
  gemv::rows_dot<T, G>(w, x, n, vecs, lane, acc);
  if (lane != 0) return;
#pragma unroll
  for (int i = 0; i < G; ++i) {
    if (i >= n) break;
    const int64_t pair = pairs[i];
    if (kGated) {
      static_cast<T*>(g.mid)[pair * g.inter + row0] =
          dev::from_f32<T>(gated<T>(g.act, e, g.inter, row0, acc[0][i], acc[1][i]));
    } else {
      g.y[pair * g.hidden + row0] = acc[0][i];
      g.y[pair * g.hidden + row1] = acc[1][i];
    }
  }
}

// kGated: rows of w13 -> mid (T); otherwise rows of w2 -> y (fp32). Grid: (row blocks,
// pairs). Groups of 1, 2 or 4 pairs keep fewer registers than kGemvGroup's.
template <typename T, bool kGated>
__global__ void __launch_bounds__(kThreads, 2) gemv_kernel(GemvExperts g) {
  __shared__ int32_t list[kGemvMaxPairs];
  const int n_all = expert_pairs(g.ids, static_cast<int>(g.pairs), static_cast<int>(g.experts), list);
  if (n_all == 0) return;
  const int lane = threadIdx.x & 31;
  const int64_t unit = static_cast<int64_t>(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  // gated: output column j = unit (w13 rows j and I + j); down: w2 rows 2 unit, 2 unit + 1.
  const int64_t rows = kGated ? 2 * g.inter : g.hidden, k = kGated ? g.hidden : g.inter;
  const int64_t row0 = kGated ? unit : 2 * unit, row1 = kGated ? g.inter + unit : 2 * unit + 1;
  if (row0 >= (kGated ? g.inter : g.hidden)) return;
  const int64_t e = g.ids[blockIdx.y], vecs = k * static_cast<int64_t>(sizeof(T)) / 16;
  const T* base = static_cast<const T*>(kGated ? g.w13 : g.w2) + e * rows * k;
  // hidden is a whole number of 16-byte vectors, so even: row1 < rows.
  const uint4* const w[2] = {reinterpret_cast<const uint4*>(base + row0 * k),
                             reinterpret_cast<const uint4*>(base + row1 * k)};
  for (int g0 = 0; g0 < n_all; g0 += kGemvGroup) {
    const int n = n_all - g0 < kGemvGroup ? n_all - g0 : kGemvGroup;
    if (n == 1)
      rows_for_pairs<T, kGated, 1>(g, w, list + g0, n, e, row0, row1, vecs, lane);
    else if (n == 2)
      rows_for_pairs<T, kGated, 2>(g, w, list + g0, n, e, row0, row1, vecs, lane);
    else if (n <= 4)
      rows_for_pairs<T, kGated, 4>(g, w, list + g0, n, e, row0, row1, vecs, lane);
    else
      rows_for_pairs<T, kGated, kGemvGroup>(g, w, list + g0, n, e, row0, row1, vecs, lane);
  }
}

template <typename T>
struct Gemv {
  static cudaError_t run(const GemvExperts& g, cudaStream_t stream) {
    const dim3 gated((static_cast<unsigned>(g.inter) + kWarps - 1) / kWarps, static_cast<unsigned>(g.pairs));
    gemv_kernel<T, true><<<gated, kThreads, 0, stream>>>(g);
    const dim3 down((static_cast<unsigned>(g.hidden) + 2 * kWarps - 1) / (2 * kWarps), static_cast<unsigned>(g.pairs));
    gemv_kernel<T, false><<<down, kThreads, 0, stream>>>(g);
    return cudaGetLastError();
  }
};

}  // namespace

bool gemv_fits(launch::Elem elem, int64_t pairs, int64_t experts, int64_t hidden, int64_t inter) {
  const int64_t vec = elem == launch::Elem::kF32 ? 4 : 8;  // elements in 16 bytes
  return pairs > 0 && pairs <= kGemvMaxPairs && pairs <= kGemvRowsPerExpert * experts && hidden % vec == 0 &&
         inter % vec == 0 && inter <= INT_MAX / 2 && hidden <= INT_MAX / 2;
}

cudaError_t gemv_experts(launch::Elem elem, const GemvExperts& g, cudaStream_t stream) {
  if (!gemv_fits(elem, g.pairs, g.experts, g.hidden, g.inter)) return cudaErrorInvalidValue;
  return FK_CUDA_DISPATCH_ELEM(elem, Gemv, g, stream);
}

}  // namespace fk::cuda::moe
