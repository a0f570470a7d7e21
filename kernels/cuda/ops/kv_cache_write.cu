// CUDA baseline of kv_cache_write: one grid-stride loop over the new tokens' elements
// of key and value together, in 16-byte packs when the row (kv_heads * head_dim) and
// all four pointers allow it, else by element. Source element e of sequence s maps to
// cache element (s * cache_len + q_start) * row + e, so each sequence's new rows are
// one contiguous run of q_len * row elements in the cache.
#include "kernels/cuda/ops/kv_cache_write_launch.h"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

constexpr int kThreads = 256;

// Sizes in units of N-element packs: seq = q_len * row / N per sequence.
template <typename T, int N>
__global__ void kv_cache_write_kernel(const T* __restrict__ key, const T* __restrict__ value, T* __restrict__ kc,
                                      T* __restrict__ vc, int64_t batch, int64_t seq, int64_t seq_stride,
                                      int64_t offset) {
  using P = dev::Pack<T, N>;
  const int64_t total = batch * seq;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < total;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t s = p / seq, e = p - s * seq;
    const int64_t dst = s * seq_stride + offset + e;
    reinterpret_cast<P*>(kc)[dst] = reinterpret_cast<const P*>(key)[p];
    reinterpret_cast<P*>(vc)[dst] = reinterpret_cast<const P*>(value)[p];
  }
}

template <typename T, int N>
cudaError_t launch_with(const void* key, const void* value, void* kc, void* vc, int64_t batch, int64_t cache_len,
                        int64_t q_len, int64_t q_start, int64_t row, cudaStream_t stream) {
  const int64_t packs_per_row = row / N, seq = q_len * packs_per_row;
  kv_cache_write_kernel<T, N><<<dev::grid_blocks(batch * seq, kThreads), kThreads, 0, stream>>>(
      static_cast<const T*>(key), static_cast<const T*>(value), static_cast<T*>(kc), static_cast<T*>(vc), batch, seq,
      cache_len * packs_per_row, q_start * packs_per_row);
  return cudaGetLastError();
}

template <typename T>
struct KvCacheWrite {
  static cudaError_t run(const void* key, const void* value, void* kc, void* vc, int64_t batch, int64_t cache_len,
                         int64_t q_len, int64_t q_start, int64_t row, cudaStream_t stream) {
    if (batch <= 0 || q_len <= 0 || row <= 0) return cudaSuccess;
    if (q_start < 0 || q_start + q_len > cache_len) return cudaErrorInvalidValue;
    constexpr int V = dev::kVec<T>;
    if (row % V == 0 && dev::aligned16(key) && dev::aligned16(value) && dev::aligned16(kc) && dev::aligned16(vc))
      return launch_with<T, V>(key, value, kc, vc, batch, cache_len, q_len, q_start, row, stream);
    return launch_with<T, 1>(key, value, kc, vc, batch, cache_len, q_len, q_start, row, stream);
  }
};

}  // namespace

cudaError_t launch::kv_cache_write(const void* key, const void* value, void* key_cache, void* value_cache, Elem elem,
                                   int64_t batch, int64_t cache_len, int64_t q_len, int64_t q_start, int64_t row,
                                   cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, KvCacheWrite, key, value, key_cache, value_cache, batch, cache_len, q_len,
                               q_start, row, stream);
}

}  // namespace fk::cuda
