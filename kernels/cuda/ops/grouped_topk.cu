// CUDA grouped_topk baseline: one warp per token. The lanes stride over the experts for
// the softmax's max and sum (fp32); each group's score is a warp reduction over its
// experts (the two largest choice values merged pairwise, or the largest score), kept
// in shared memory; the topk_group groups and then the k experts are picked one round
// at a time as in topk_softmax.cu: each round takes the best (value, index) strictly
// after the previous winner in the order "value descending, index ascending", with
// every value recomputed by the same expression, so ties go to the lower index as on
// the CPU and nothing needs marking.
#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/grouped_topk_launch.h"

#include <climits>

namespace fk::cuda {
namespace {

constexpr int kWarps = 4;  // tokens per block
constexpr int kMaxGroups = static_cast<int>(launch::kGroupedTopkMaxGroups);

struct Best {
  float v;
  int i;
};

// The warp's best (v, i) in the order (v descending, i ascending).
__device__ __forceinline__ Best warp_best(Best b) {
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, b.v, o);
    const int oi = __shfl_xor_sync(0xffffffffu, b.i, o);
    if (ov > b.v || (ov == b.v && oi < b.i)) b = Best{ov, oi};
  }
  return b;
}

template <typename T>
__global__ void grouped_topk_kernel(float* __restrict__ weights, int32_t* __restrict__ ids,
                                    const T* __restrict__ gating, const float* __restrict__ bias, int64_t tokens,
                                    int experts, int k, int groups, int topk_group, bool renormalize, bool sigmoid,
                                    float scale) {
  __shared__ float group_score[kWarps][kMaxGroups];
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
  if (t >= tokens) return;  // whole warps leave together; no block-wide barrier below
  const T* g = gating + static_cast<size_t>(t) * experts;
  float mx = 0.f, sum = 1.f;
  if (!sigmoid) {
    mx = -INFINITY;
    for (int j = lane; j < experts; j += 32) mx = fmaxf(mx, dev::to_f32(g[j]));
    mx = dev::warp_max(mx);
    sum = 0.f;
    for (int j = lane; j < experts; j += 32) sum += expf(dev::to_f32(g[j]) - mx);
    sum = dev::warp_sum(sum);
  }
  auto score = [&](int j) {
    const float x = dev::to_f32(g[j]);
    return sigmoid ? 1.f / (1.f + expf(-x)) : expf(x - mx) / sum;
  };
  auto choice = [&](int j) { return bias != nullptr ? score(j) + bias[j] : score(j); };
  const int per = experts / groups;
  for (int gr = 0; gr < groups; ++gr) {
    float a = -INFINITY, b = -INFINITY;
    for (int j = gr * per + lane; j < (gr + 1) * per; j += 32) {
      const float c = choice(j);
      if (c > a) {
        b = a;
        a = c;
      } else if (c > b) {
        b = c;
      }
    }
    for (int o = 16; o > 0; o >>= 1) {
      const float oa = __shfl_xor_sync(0xffffffffu, a, o), ob = __shfl_xor_sync(0xffffffffu, b, o);
      const float hi = fmaxf(a, oa), lo = fmaxf(fminf(a, oa), fmaxf(b, ob));
      a = hi;
      b = lo;
    }
    if (lane == 0) group_score[warp][gr] = bias != nullptr && per > 1 ? a + b : a;
  }
  __syncwarp();
  // The topk_group best groups, as a bit mask.
  unsigned long long open = 0;
  Best prev{INFINITY, -1};
  for (int r = 0; r < topk_group; ++r) {
    Best b{-INFINITY, INT_MAX};
    for (int gr = lane; gr < groups; gr += 32) {
      const float v = group_score[warp][gr];
      const bool after = v < prev.v || (v == prev.v && gr > prev.i);
      if (after && (v > b.v || (v == b.v && gr < b.i))) b = Best{v, gr};
    }
    b = warp_best(b);
    open |= 1ull << b.i;
    prev = b;
  }
  float* w = weights + static_cast<size_t>(t) * k;
  int32_t* id = ids + static_cast<size_t>(t) * k;
  float chosen = 0.f;
  prev = Best{INFINITY, -1};
  for (int r = 0; r < k; ++r) {
    Best b{-INFINITY, INT_MAX};
    for (int j = lane; j < experts; j += 32) {
      if (!((open >> (j / per)) & 1ull)) continue;
      const float v = choice(j);
      const bool after = v < prev.v || (v == prev.v && j > prev.i);
      if (after && (v > b.v || (v == b.v && j < b.i))) b = Best{v, j};
    }
    b = warp_best(b);
    const float s = score(b.i);
    chosen += s;
    if (lane == (r & 31)) {
      w[r] = s;
      id[r] = b.i;
    }
    prev = b;
  }
  for (int r = lane; r < k; r += 32) w[r] = (renormalize ? w[r] / chosen : w[r]) * scale;
}

template <typename T>
struct GroupedTopk {
  static cudaError_t run(float* weights, int32_t* ids, const void* gating, const float* bias, int64_t tokens,
                         int64_t experts, int64_t k, int64_t groups, int64_t topk_group, bool renormalize, bool sigmoid,
                         float scale, cudaStream_t stream) {
    if (tokens == 0) return cudaSuccess;
    if (groups < 1 || groups > kMaxGroups || experts % groups != 0 || topk_group < 1 || topk_group > groups || k < 1 ||
        k > topk_group * (experts / groups) || experts > INT_MAX)
      return cudaErrorInvalidValue;
    const int64_t blocks = (tokens + kWarps - 1) / kWarps;
    grouped_topk_kernel<T><<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(
        weights, ids, static_cast<const T*>(gating), bias, tokens, static_cast<int>(experts), static_cast<int>(k),
        static_cast<int>(groups), static_cast<int>(topk_group), renormalize, sigmoid, scale);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::grouped_topk(float* weights, int32_t* ids, const void* gating, const float* bias, Elem elem,
                                 int64_t tokens, int64_t experts, int64_t k, int64_t groups, int64_t topk_group,
                                 bool renormalize, bool sigmoid, float scale, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, GroupedTopk, weights, ids, gating, bias, tokens, experts, k, groups, topk_group,
                               renormalize, sigmoid, scale, stream);
}

}  // namespace fk::cuda
