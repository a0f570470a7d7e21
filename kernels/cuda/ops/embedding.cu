// CUDA baseline of the vocab-parallel embedding: one block per token, threads copying
// the row in 16-byte packs when hidden and both pointers allow it, else by element.
// Ids outside this rank's rows [vocab_start, vocab_start + rows) write zeros, so no
// id, however wrong, reads outside the table. The copy is bitwise (no rounding).
#include "kernels/cuda/ops/embedding_launch.h"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

template <typename T, int N, typename Id>
__global__ void embedding_kernel(T* __restrict__ out, const Id* __restrict__ ids, const T* __restrict__ w,
                                 int64_t tokens, int64_t packs, int64_t rows, int64_t start) {
  using P = dev::Pack<T, N>;
  for (int64_t t = blockIdx.x; t < tokens; t += gridDim.x) {
    const int64_t id = static_cast<int64_t>(ids[t]) - start;
    P* dst = reinterpret_cast<P*>(out) + t * packs;
    if (id >= 0 && id < rows) {
      const P* src = reinterpret_cast<const P*>(w) + id * packs;
      for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) dst[p] = src[p];
    } else {
      P z;
#pragma unroll
      for (int k = 0; k < N; ++k) z.v[k] = dev::from_f32<T>(0.f);
      for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) dst[p] = z;
    }
  }
}

template <typename T, int N, typename Id>
cudaError_t launch_with(void* out, const void* ids, const void* w, int64_t tokens, int64_t hidden, int64_t rows,
                        int64_t start, cudaStream_t stream) {
  const int64_t packs = hidden / N;
  embedding_kernel<T, N, Id><<<dev::row_blocks(tokens), dev::row_threads(packs), 0, stream>>>(
      static_cast<T*>(out), static_cast<const Id*>(ids), static_cast<const T*>(w), tokens, packs, rows, start);
  return cudaGetLastError();
}

template <typename T>
struct Embedding {
  template <typename Id>
  static cudaError_t run_ids(void* out, const void* ids, const void* w, int64_t tokens, int64_t hidden, int64_t rows,
                             int64_t start, cudaStream_t stream) {
    constexpr int V = dev::kVec<T>;
    if (hidden % V == 0 && dev::aligned16(out) && dev::aligned16(w))
      return launch_with<T, V, Id>(out, ids, w, tokens, hidden, rows, start, stream);
    return launch_with<T, 1, Id>(out, ids, w, tokens, hidden, rows, start, stream);
  }

  static cudaError_t run(void* out, const void* ids, bool ids_i64, const void* w, int64_t tokens, int64_t hidden,
                         int64_t rows, int64_t start, cudaStream_t stream) {
    if (tokens <= 0 || hidden <= 0) return cudaSuccess;
    return ids_i64 ? run_ids<int64_t>(out, ids, w, tokens, hidden, rows, start, stream)
                   : run_ids<int32_t>(out, ids, w, tokens, hidden, rows, start, stream);
  }
};

}  // namespace

cudaError_t launch::embedding(void* out, const void* ids, bool ids_i64, const void* weight, Elem elem,
                              int64_t tokens, int64_t hidden, int64_t rows, int64_t vocab_start,
                              cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Embedding, out, ids, ids_i64, weight, tokens, hidden, rows, vocab_start,
                               stream);
}

}  // namespace fk::cuda
