// CUDA topk_softmax baseline: one warp per token. The lanes stride over the experts
// for the max and the sum of exponentials (fp32), then pick the k winners one round
// at a time: each round takes the best (p, id) that comes strictly after the previous
// winner in the order "p descending, id ascending" (a warp arg-max), so nothing needs
// marking and the ties go to the lower id as on the CPU. p is recomputed each round by
// the same expression, so every round sees identical values.
#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/topk_softmax_launch.h"

#include <climits>

namespace fk::cuda {
namespace {

constexpr int kWarps = 4;  // tokens per block

template <typename T>
__global__ void topk_softmax_kernel(float* __restrict__ weights, int32_t* __restrict__ ids, const T* __restrict__ gating,
                                    int64_t tokens, int experts, int k, bool renormalize) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (t >= tokens) return;  // whole warps leave together
  const int lane = threadIdx.x & 31;
  const T* g = gating + static_cast<size_t>(t) * experts;
  float mx = -INFINITY;
  for (int j = lane; j < experts; j += 32) mx = fmaxf(mx, dev::to_f32(g[j]));
  mx = dev::warp_max(mx);
  float sum = 0.f;
  for (int j = lane; j < experts; j += 32) sum += expf(dev::to_f32(g[j]) - mx);
  sum = dev::warp_sum(sum);

  float* w = weights + static_cast<size_t>(t) * k;
  int32_t* id = ids + static_cast<size_t>(t) * k;
  float prev_p = INFINITY, chosen = 0.f;
  int prev_id = -1;
  for (int i = 0; i < k; ++i) {
    float best_p = -1.f;  // below every probability
    int best_id = INT_MAX;
    for (int j = lane; j < experts; j += 32) {
      const float p = expf(dev::to_f32(g[j]) - mx);
      const bool after = p < prev_p || (p == prev_p && j > prev_id);
      if (after && (p > best_p || (p == best_p && j < best_id))) {
        best_p = p;
        best_id = j;
      }
    }
    for (int o = 16; o > 0; o >>= 1) {
      const float op = __shfl_xor_sync(0xffffffffu, best_p, o);
      const int oid = __shfl_xor_sync(0xffffffffu, best_id, o);
      if (op > best_p || (op == best_p && oid < best_id)) {
        best_p = op;
        best_id = oid;
      }
    }
    const float wi = best_p / sum;
    chosen += wi;
    if (lane == (i & 31)) {
      w[i] = wi;
      id[i] = best_id;
    }
    prev_p = best_p;
    prev_id = best_id;
  }
  if (renormalize)  // each lane rescales the entries it wrote itself
    for (int i = lane; i < k; i += 32) w[i] = w[i] / chosen;
}

template <typename T>
struct TopkSoftmax {
  static cudaError_t run(float* weights, int32_t* ids, const void* gating, int64_t tokens, int64_t experts, int64_t k,
                         bool renormalize, cudaStream_t stream) {
    if (tokens == 0) return cudaSuccess;
    if (k < 1 || k > experts || experts > INT_MAX) return cudaErrorInvalidValue;
    const int64_t blocks = (tokens + kWarps - 1) / kWarps;
    topk_softmax_kernel<T><<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(
        weights, ids, static_cast<const T*>(gating), tokens, static_cast<int>(experts), static_cast<int>(k),
        renormalize);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::topk_softmax(float* weights, int32_t* ids, const void* gating, Elem elem, int64_t tokens,
                                 int64_t experts, int64_t k, bool renormalize, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, TopkSoftmax, weights, ids, gating, tokens, experts, k, renormalize, stream);
}

}  // namespace fk::cuda
