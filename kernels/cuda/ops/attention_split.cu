// Split-KV plumbing shared by the decode attention kernels (nvcc, C++17): how many
// splits of the keys fill the device, the stream-ordered workspace of the splits'
// partials, and the kernel that merges them into the output. A kernel that splits
// writes, per output row (b * q_heads + head) and split s, the unnormalised output
// sum_j exp(x_j - m) v_j at part_o[(row * splits + s) * d] and (m, sum_j exp(x_j - m))
// at part_ml[(row * splits + s) * 2], in the natural-log domain; a split that saw no
// key writes a zero sum.
#include "kernels/cuda/ops/attention.cuh"
#include "kernels/cuda/ops/row.cuh"
#include "kernels/cuda/ops/scratch.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace fk::cuda {
namespace {

constexpr int64_t kMinSplitKeys = 64;

// Merges the splits of one output row (a block per row, a thread per dimension); the
// row's sink (attention sinks: row b * q_heads + h) joins the denominator here once.
template <typename T>
__global__ void merge_kernel(T* __restrict__ out, const float* __restrict__ part_o, const float* __restrict__ part_ml,
                             int64_t splits, int d, const float* __restrict__ sinks, int64_t q_heads) {
  const size_t row = blockIdx.x;
  const float* ml = part_ml + row * splits * 2;
  float mx = -INFINITY;
  for (int64_t s = 0; s < splits; ++s)
    if (ml[2 * s + 1] > 0.f) mx = fmaxf(mx, ml[2 * s]);
  float den = 0.f;
  for (int64_t s = 0; s < splits; ++s)
    if (ml[2 * s + 1] > 0.f) den += expf(ml[2 * s] - mx) * ml[2 * s + 1];
  if (sinks != nullptr && den > 0.f) den += expf(sinks[row % q_heads] - mx);
  for (int e = threadIdx.x; e < d; e += blockDim.x) {
    float num = 0.f;
    for (int64_t s = 0; s < splits; ++s)
      if (ml[2 * s + 1] > 0.f) num += expf(ml[2 * s] - mx) * part_o[(row * splits + s) * d + e];
    out[row * d + e] = dev::from_f32<T>(den > 0.f ? num / den : 0.f);
  }
}

template <typename T>
struct Merge {
  static cudaError_t run(void* out, const float* part_o, const float* part_ml, size_t rows, int64_t splits, int d,
                         const float* sinks, int64_t q_heads, cudaStream_t stream) {
    merge_kernel<T><<<static_cast<unsigned>(rows), dev::row_threads(d), 0, stream>>>(
        static_cast<T*>(out), part_o, part_ml, splits, d, sinks, q_heads);
    return cudaGetLastError();
  }
};

}  // namespace

DecodeSplit attention_split_for(const AttentionGeometry& g, const DecodeSplitPlan& plan) {
  const int64_t keys = g.end_key(g.q_start) - g.first_key(g.q_start);
  const int64_t most = (keys + kMinSplitKeys - 1) / kMinSplitKeys;
  const int64_t resident = plan.resident > 0 ? plan.resident : 1;
  int64_t best = 1;
  double best_fill = -1.0;
  for (int64_t splits = 1; splits <= most && splits <= 1024; ++splits) {
    const int64_t blocks = plan.base_blocks * splits, waves = (blocks + resident - 1) / resident;
    const double fill = static_cast<double>(blocks) / static_cast<double>(waves * resident);
    if (fill > best_fill + 1e-9) best = splits, best_fill = fill;
    if (fill >= 0.9) break;
  }
  int64_t chunk = (keys + best - 1) / best;
  chunk = (chunk + plan.tile_keys - 1) / plan.tile_keys * plan.tile_keys;
  return {(keys + chunk - 1) / chunk, chunk};
}

cudaError_t attention_resident_blocks(const void* kernel, int threads, size_t dynamic_smem, int64_t* resident) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int64_t> cache;
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(mu);
  int64_t& n = cache[{kernel, dev}];
  if (n == 0) {
    if (const cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(dynamic_smem));
        e != cudaSuccess)
      return e;
    int per_sm = 0;
    if (const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_smem);
        e != cudaSuccess)
      return e;
    const int sms = attention_device().sms;
    n = static_cast<int64_t>(per_sm > 0 ? per_sm : 1) * (sms > 0 ? sms : 1);
  }
  *resident = n;
  return cudaSuccess;
}

cudaError_t attention_decode_split(void* out, launch::Elem elem, const AttentionGeometry& g,
                                   const DecodeSplitPlan& plan, cudaStream_t stream, const DecodeLaunch& run) {
  const DecodeSplit sp = attention_split_for(g, plan);
  if (sp.splits == 1) return run(nullptr, nullptr, sp);
  const size_t rows = static_cast<size_t>(g.batch * g.q_heads);
  const size_t o_bytes = rows * static_cast<size_t>(sp.splits) * static_cast<size_t>(g.d) * sizeof(float);
  const size_t ml_bytes = rows * static_cast<size_t>(sp.splits) * 2 * sizeof(float);
  void* ws = nullptr;
  if (const cudaError_t e = scratch_alloc(&ws, o_bytes + ml_bytes, stream); e != cudaSuccess) return e;
  float* part_o = static_cast<float*>(ws);
  float* part_ml = reinterpret_cast<float*>(static_cast<char*>(ws) + o_bytes);
  cudaError_t e = run(part_o, part_ml, sp);
  if (e == cudaSuccess)
    e = FK_CUDA_DISPATCH_ELEM(elem, Merge, out, part_o, part_ml, rows, sp.splits, g.d, g.sinks, g.q_heads, stream);
  const cudaError_t f = scratch_free(ws, stream);
  return e == cudaSuccess ? f : e;
}

}  // namespace fk::cuda
