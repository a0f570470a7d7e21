// CUDA baselines of the activations (silu_and_mul, gelu_and_mul, gelu_tanh_and_mul,
// gelu, gelu_new, relu, relu2, silu): grid-stride loops over 16-byte packs of the output.
// Gated ops take the vector path when d is a multiple of the pack and both pointers
// are 16-byte aligned (then both halves of every input row are aligned too), else one
// element per step; plain ops vectorise the flat body and finish the tail by element.
// Activations run in fp32 with accurate libm calls (expf, erff, tanhf), one rounding.
#include "kernels/cuda/ops/activations_launch.h"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

using launch::Activation;

template <Activation A>
__device__ __forceinline__ float activate(float x) {
  if constexpr (A == Activation::kSilu) {
    return x / (1.f + expf(-x));
  } else if constexpr (A == Activation::kGelu) {
    return 0.5f * x * (1.f + erff(x / sqrtf(2.f)));
  } else if constexpr (A == Activation::kGeluTanh) {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * x * (1.f + tanhf(k * (x + 0.044715f * x * x * x)));
  } else if constexpr (A == Activation::kRelu2) {
    return x > 0.f ? x * x : 0.f;
  } else {
    return x > 0.f ? x : 0.f;
  }
}

// out [rows, d] from in [rows, 2d], in packs of N: d_packs = d / N per row.
template <typename T, int N, Activation A>
__global__ void act_and_mul_kernel(T* out, const T* in, int64_t rows, int64_t d_packs) {
  using P = dev::Pack<T, N>;
  const P* ip = reinterpret_cast<const P*>(in);
  P* op = reinterpret_cast<P*>(out);
  const int64_t total = rows * d_packs;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < total;
       p += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = p / d_packs, c = p - r * d_packs;
    const P a = ip[2 * r * d_packs + c], g = ip[(2 * r + 1) * d_packs + c];
    P o;
#pragma unroll
    for (int k = 0; k < N; ++k) o.v[k] = dev::from_f32<T>(activate<A>(dev::to_f32(a.v[k])) * dev::to_f32(g.v[k]));
    op[p] = o;
  }
}

// out[i] = act(in[i]) for i < n: packs of N over [0, n / N * N), then the tail.
template <typename T, int N, Activation A>
__global__ void act_kernel(T* out, const T* in, int64_t n) {
  using P = dev::Pack<T, N>;
  const int64_t packs = n / N;
  const int64_t start = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = start; p < packs; p += stride) {
    const P a = reinterpret_cast<const P*>(in)[p];
    P o;
#pragma unroll
    for (int k = 0; k < N; ++k) o.v[k] = dev::from_f32<T>(activate<A>(dev::to_f32(a.v[k])));
    reinterpret_cast<P*>(out)[p] = o;
  }
  for (int64_t i = packs * N + start; i < n; i += stride) out[i] = dev::from_f32<T>(activate<A>(dev::to_f32(in[i])));
}

constexpr int kThreads = 256;

template <typename T, Activation A>
cudaError_t run_act(void* out, const void* in, bool gated, int64_t rows, int64_t d, cudaStream_t stream) {
  constexpr int V = dev::kVec<T>;
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(in);
  const bool aligned = dev::aligned16(out) && dev::aligned16(in);
  if (gated) {
    if (aligned && d % V == 0)
      act_and_mul_kernel<T, V, A><<<dev::grid_blocks(rows * d / V, kThreads), kThreads, 0, stream>>>(o, x, rows, d / V);
    else
      act_and_mul_kernel<T, 1, A><<<dev::grid_blocks(rows * d, kThreads), kThreads, 0, stream>>>(o, x, rows, d);
  } else {
    const int64_t n = rows * d;
    if (aligned)
      act_kernel<T, V, A><<<dev::grid_blocks(n / V + 1, kThreads), kThreads, 0, stream>>>(o, x, n);
    else
      act_kernel<T, 1, A><<<dev::grid_blocks(n, kThreads), kThreads, 0, stream>>>(o, x, n);
  }
  return cudaGetLastError();
}

template <typename T>
struct Act {
  static cudaError_t run(void* out, const void* in, Activation act, bool gated, int64_t rows, int64_t d,
                         cudaStream_t stream) {
    if (rows <= 0 || d <= 0) return cudaSuccess;
    switch (act) {
      case Activation::kSilu: return run_act<T, Activation::kSilu>(out, in, gated, rows, d, stream);
      case Activation::kGelu: return run_act<T, Activation::kGelu>(out, in, gated, rows, d, stream);
      case Activation::kGeluTanh: return run_act<T, Activation::kGeluTanh>(out, in, gated, rows, d, stream);
      case Activation::kRelu: return run_act<T, Activation::kRelu>(out, in, gated, rows, d, stream);
      case Activation::kRelu2: return run_act<T, Activation::kRelu2>(out, in, gated, rows, d, stream);
    }
    return cudaErrorInvalidValue;
  }
};

}  // namespace

cudaError_t launch::activation(void* out, const void* in, Elem elem, Activation act, bool gated, int64_t rows,
                               int64_t d, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Act, out, in, act, gated, rows, d, stream);
}

}  // namespace fk::cuda
