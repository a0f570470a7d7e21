// CUDA baselines of the small elementwise ops (add, scale, softcap, sigmoid_gate) and
// argmax. sigmoid_gate: a grid-stride loop over elements, each scaled by the sigmoid of
// its row's gate (read through the cache: one value per row).
// add/scale/softcap: grid-stride loops over 16-byte packs when every pointer is
// 16-byte aligned, the tail (n mod pack) by element; each thread reads and writes the
// same positions, so in-place calls are safe. argmax: one block per row, each thread
// keeps the first maximum of its strided slice, then a block (value, index) reduction.
#include "kernels/cuda/ops/elementwise_launch.h"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

constexpr int kThreads = 256;

struct ScaleOp {
  float factor;
  __device__ __forceinline__ float operator()(float v) const { return v * factor; }
};
struct SoftcapOp {
  float cap;
  __device__ __forceinline__ float operator()(float v) const { return cap * tanhf(v / cap); }
};

template <typename T, int N>
__global__ void add_kernel(T* out, const T* a, const T* b, int64_t n) {
  using P = dev::Pack<T, N>;
  const int64_t packs = n / N;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = start; p < packs; p += stride) {
    const P x = reinterpret_cast<const P*>(a)[p], y = reinterpret_cast<const P*>(b)[p];
    P o;
#pragma unroll
    for (int k = 0; k < N; ++k) o.v[k] = dev::from_f32<T>(dev::to_f32(x.v[k]) + dev::to_f32(y.v[k]));
    reinterpret_cast<P*>(out)[p] = o;
  }
  for (int64_t i = packs * N + start; i < n; i += stride)
    out[i] = dev::from_f32<T>(dev::to_f32(a[i]) + dev::to_f32(b[i]));
}

template <typename T, int N, typename F>
__global__ void map_kernel(T* x, int64_t n, F f) {
  using P = dev::Pack<T, N>;
  const int64_t packs = n / N;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = start; p < packs; p += stride) {
    P v = reinterpret_cast<const P*>(x)[p];
#pragma unroll
    for (int k = 0; k < N; ++k) v.v[k] = dev::from_f32<T>(f(dev::to_f32(v.v[k])));
    reinterpret_cast<P*>(x)[p] = v;
  }
  for (int64_t i = packs * N + start; i < n; i += stride) x[i] = dev::from_f32<T>(f(dev::to_f32(x[i])));
}

template <typename T>
__global__ void sigmoid_gate_kernel(T* __restrict__ x, const T* __restrict__ gate, int64_t n, int64_t hidden) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float g = dev::to_f32(__ldg(gate + i / hidden));
    x[i] = dev::from_f32<T>(dev::to_f32(x[i]) / (1.0f + __expf(-g)));
  }
}

template <typename T, int N>
__global__ void argmax_kernel(int64_t* __restrict__ ids, const T* __restrict__ x, int64_t rows, int64_t vocab) {
  using P = dev::Pack<T, N>;
  const int64_t packs = vocab / N;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * vocab;
    float bv = -INFINITY;
    int64_t bi = INT64_MAX;
    for (int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      const P v = reinterpret_cast<const P*>(row)[p];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const float f = dev::to_f32(v.v[k]);
        if (dev::argmax_better(f, p * N + k, bv, bi)) bv = f, bi = p * N + k;
      }
    }
    for (int64_t j = packs * N + threadIdx.x; j < vocab; j += blockDim.x) {
      const float f = dev::to_f32(row[j]);
      if (dev::argmax_better(f, j, bv, bi)) bv = f, bi = j;
    }
    const int64_t best = dev::block_argmax(bv, bi);
    if (threadIdx.x == 0) ids[r] = (best == INT64_MAX || isnan(dev::to_f32(row[0]))) ? 0 : best;
  }
}

template <typename T>
struct Add {
  static cudaError_t run(void* out, const void* a, const void* b, int64_t n, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    constexpr int V = dev::kVec<T>;
    T* o = static_cast<T*>(out);
    const T *x = static_cast<const T*>(a), *y = static_cast<const T*>(b);
    if (dev::aligned16(out) && dev::aligned16(a) && dev::aligned16(b))
      add_kernel<T, V><<<dev::grid_blocks(n / V + 1, kThreads), kThreads, 0, stream>>>(o, x, y, n);
    else
      add_kernel<T, 1><<<dev::grid_blocks(n, kThreads), kThreads, 0, stream>>>(o, x, y, n);
    return cudaGetLastError();
  }
};

template <typename T>
struct Map {
  template <typename F>
  static cudaError_t run(void* x, int64_t n, F f, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    constexpr int V = dev::kVec<T>;
    if (dev::aligned16(x))
      map_kernel<T, V><<<dev::grid_blocks(n / V + 1, kThreads), kThreads, 0, stream>>>(static_cast<T*>(x), n, f);
    else
      map_kernel<T, 1><<<dev::grid_blocks(n, kThreads), kThreads, 0, stream>>>(static_cast<T*>(x), n, f);
    return cudaGetLastError();
  }
};

template <typename T>
struct SigmoidGate {
  static cudaError_t run(void* x, const void* gate, int64_t tokens, int64_t hidden, cudaStream_t stream) {
    const int64_t n = tokens * hidden;
    if (n <= 0) return cudaSuccess;
    sigmoid_gate_kernel<T><<<dev::grid_blocks(n, kThreads), kThreads, 0, stream>>>(
        static_cast<T*>(x), static_cast<const T*>(gate), n, hidden);
    return cudaGetLastError();
  }
};

template <typename T>
struct Argmax {
  static cudaError_t run(int64_t* ids, const void* x, int64_t rows, int64_t vocab, cudaStream_t stream) {
    if (rows <= 0) return cudaSuccess;
    if (vocab <= 0) return cudaMemsetAsync(ids, 0, static_cast<size_t>(rows) * sizeof(int64_t), stream);
    constexpr int V = dev::kVec<T>;
    const T* xp = static_cast<const T*>(x);
    if (vocab % V == 0 && dev::aligned16(x))
      argmax_kernel<T, V><<<dev::row_blocks(rows), dev::row_threads(vocab / V), 0, stream>>>(ids, xp, rows, vocab);
    else
      argmax_kernel<T, 1><<<dev::row_blocks(rows), dev::row_threads(vocab), 0, stream>>>(ids, xp, rows, vocab);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::add(void* out, const void* a, const void* b, Elem elem, int64_t n, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Add, out, a, b, n, stream);
}

cudaError_t launch::scale(void* x, Elem elem, int64_t n, float factor, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Map, x, n, ScaleOp{factor}, stream);
}

cudaError_t launch::softcap(void* x, Elem elem, int64_t n, float cap, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Map, x, n, SoftcapOp{cap}, stream);
}

cudaError_t launch::sigmoid_gate(void* x, const void* gate, Elem elem, int64_t tokens, int64_t hidden,
                                 cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, SigmoidGate, x, gate, tokens, hidden, stream);
}

cudaError_t launch::argmax(int64_t* ids, const void* x, Elem elem, int64_t tokens, int64_t vocab,
                           cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Argmax, ids, x, tokens, vocab, stream);
}

}  // namespace fk::cuda
