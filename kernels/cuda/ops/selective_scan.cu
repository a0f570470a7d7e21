// CUDA baselines of selective_scan (Mamba) and ssd_scan (Mamba-2, launch::ssd_scan: the
// same recurrence with dt, D and dt_bias a head of head_dim channels, A a scalar a head,
// B and C in groups of heads; kernels/ops/ssm_scan.h). A group of G lanes (a power of
// two, 1..32) per (sequence, channel), walking the tokens in order, the group's h and A in fp32
// registers. A lane holds Q vectors of V consecutive states, n = q G V + lane V + j
// (q < Q, j < V): V = 4 when N is a multiple of 4 and the pointers allow 4-element
// loads (B, C, A and the state are then read in packs), else 1. G is the smallest
// power of two with G V >= N (several channels share a warp) up to 32; past G V = 32,
// G = 32 and Q is the power of two with G Q V >= N, up to 1024 states in all.
// Per token the lanes update their states and sum h[n] C[n] over them, a shuffle
// reduction within the group gives y, and lane 0 of the group stores out. The inputs
// of kSteps tokens are loaded together, a batch ahead of their use (double buffered),
// so the loads overlap the recurrence. Groups past the last (sequence, channel) run on
// a clamped valid one and store nothing, so every lane takes part in every shuffle.
// Order of operations as the CPU baseline: dt in fp32 (+ bias, softplus with
// threshold 20, the clamp), exp(dt A), dt B u.
#include "kernels/cuda/ops/row.cuh"
#include "kernels/cuda/ops/selective_scan_launch.h"

#include <type_traits>

namespace fk::cuda {
namespace {

constexpr int kThreads = 128;

// Tokens per load batch: the batch's registers (2 x 2R floats a token) stay bounded.
template <int R>
inline constexpr int kSteps = R <= 2 ? 8 : R <= 4 ? 4 : R <= 8 ? 2 : 1;

// One token's inputs of a lane: its channel's scalars and its states' B and C.
template <int R>
struct Step {
  float dt, u, z;
  float b[R], c[R];
};

template <typename T, int V>
__device__ __forceinline__ void load_pack(float* dst, const T* src) {
  const dev::Pack<T, V> p = *reinterpret_cast<const dev::Pack<T, V>*>(src);
#pragma unroll
  for (int j = 0; j < V; ++j) dst[j] = dev::to_f32(p.v[j]);
}

// What indexes what (kernels/ops/ssm_scan.h): dt, D and delta_bias a head of head_dim
// channels (1 for selective_scan), B and C rows of groups x n (group of channel c:
// c / (channels / groups)), A [channels, n] or a scalar a head (a_per_head).
struct ScanShape {
  int64_t batch, len, channels, n;
  int64_t head_dim = 1, groups = 1;
  bool a_per_head = false, softplus = false;
  float dt_min = 0.f, dt_max = 0.f;  // the clamp, when dt_max > 0
};

template <int G, int Q, int V, typename T>
__device__ __forceinline__ void load_step(Step<Q * V>& s, const T* u, const T* delta, const T* z, const T* bm,
                                          const T* cm, int64_t row, const ScanShape& sh, int64_t ch, int64_t b_off,
                                          int lane) {
  s.u = dev::to_f32(u[row * sh.channels + ch]);
  s.dt = dev::to_f32(delta[row * (sh.channels / sh.head_dim) + ch / sh.head_dim]);
  s.z = z != nullptr ? dev::to_f32(z[row * sh.channels + ch]) : 0.f;
  const int64_t brow = row * sh.groups * sh.n + b_off;
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int64_t k = (q * G + lane) * V;
    if (k < sh.n) {
      load_pack<T, V>(s.b + q * V, bm + brow + k);
      load_pack<T, V>(s.c + q * V, cm + brow + k);
    }
  }
}

template <int G>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename T, int G, int Q, int V>
__global__ void selective_scan_kernel(T* __restrict__ out, const T* __restrict__ u, const T* __restrict__ delta,
                                      const float* __restrict__ a, const T* __restrict__ bm, const T* __restrict__ cm,
                                      const float* __restrict__ dskip, const T* __restrict__ z,
                                      const float* __restrict__ dbias, float* __restrict__ state, ScanShape sh) {
  constexpr int R = Q * V, P = kSteps<R>;
  constexpr int kGroups = kThreads / G;  // (sequence, channel) pairs per block
  const int lane = threadIdx.x % G;
  const int64_t channels = sh.channels, n = sh.n, len = sh.len;
  const int64_t pairs = sh.batch * channels, tiles = (pairs + kGroups - 1) / kGroups;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {  // uniform over the block
    const int64_t pair = tile * kGroups + threadIdx.x / G;
    const bool active = pair < pairs;
    const int64_t p = active ? pair : pairs - 1;
    const int64_t s = p / channels, ch = p % channels, head = ch / sh.head_dim;
    const int64_t b_off = ch / (channels / sh.groups) * n;
    float h[R] = {}, av[R] = {};
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int64_t k = (q * G + lane) * V;
      if (k < n) {
        load_pack<float, V>(h + q * V, state + p * n + k);
        if (sh.a_per_head) {
#pragma unroll
          for (int j = 0; j < V; ++j) av[q * V + j] = a[head];
        } else {
          load_pack<float, V>(av + q * V, a + ch * n + k);
        }
      }
    }
    const float d = dskip != nullptr ? dskip[head] : 0.f;
    const float bias = dbias != nullptr ? dbias[head] : 0.f;
    Step<R> next[P];
#pragma unroll
    for (int j = 0; j < P; ++j)
      if (j < len) load_step<G, Q, V>(next[j], u, delta, z, bm, cm, s * len + j, sh, ch, b_off, lane);
    for (int64_t t0 = 0; t0 < len; t0 += P) {
      Step<R> cur[P];
#pragma unroll
      for (int j = 0; j < P; ++j) cur[j] = next[j];
#pragma unroll
      for (int j = 0; j < P; ++j)
        if (t0 + P + j < len)
          load_step<G, Q, V>(next[j], u, delta, z, bm, cm, s * len + t0 + P + j, sh, ch, b_off, lane);
#pragma unroll
      for (int j = 0; j < P; ++j) {
        if (t0 + j >= len) break;  // uniform over the warp: every group walks the same len
        const Step<R>& x = cur[j];
        float dt = x.dt;
        if (dbias != nullptr) dt += bias;
        if (sh.softplus) dt = dt > 20.f ? dt : log1pf(expf(dt));
        if (sh.dt_max > 0.f) dt = fminf(fmaxf(dt, sh.dt_min), sh.dt_max);
        float y = 0.f;
#pragma unroll
        for (int q = 0; q < Q; ++q) {
          if ((q * G + lane) * V >= n) continue;  // padding states
#pragma unroll
          for (int i = q * V; i < (q + 1) * V; ++i) {
            h[i] = expf(dt * av[i]) * h[i] + dt * x.b[i] * x.u;
            y += h[i] * x.c[i];
          }
        }
        y = group_sum<G>(y);
        if (dskip != nullptr) y += d * x.u;
        if (z != nullptr) y *= x.z / (1.f + expf(-x.z));
        if (active && lane == 0) out[(s * len + t0 + j) * channels + ch] = dev::from_f32<T>(y);
      }
    }
    if (active) {
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const int64_t k = (q * G + lane) * V;
        if (k >= n) continue;
        dev::Pack<float, V> o;
#pragma unroll
        for (int j = 0; j < V; ++j) o.v[j] = h[q * V + j];
        *reinterpret_cast<dev::Pack<float, V>*>(state + p * n + k) = o;
      }
    }
  }
}

template <typename T, int G, int Q, int V>
cudaError_t launch_with(void* out, const void* u, const void* delta, const float* a, const void* bm, const void* cm,
                        const float* d, const void* z, const float* dbias, float* state, const ScanShape& sh,
                        cudaStream_t stream) {
  constexpr int kGroups = kThreads / G;
  selective_scan_kernel<T, G, Q, V>
      <<<dev::row_blocks((sh.batch * sh.channels + kGroups - 1) / kGroups), kThreads, 0, stream>>>(
          static_cast<T*>(out), static_cast<const T*>(u), static_cast<const T*>(delta), a, static_cast<const T*>(bm),
          static_cast<const T*>(cm), d, static_cast<const T*>(z), dbias, state, sh);
  return cudaGetLastError();
}

template <int K>
using Int = std::integral_constant<int, K>;

// Calls f(G, Q) for the group width and vector count that hold n states of vectors
// of V (see the file comment).
template <int V, typename F>
cudaError_t with_shape(int64_t n, F&& f) {
  if (n <= V) return f(Int<1>{}, Int<1>{});
  if (n <= 2 * V) return f(Int<2>{}, Int<1>{});
  if (n <= 4 * V) return f(Int<4>{}, Int<1>{});
  if (n <= 8 * V) return f(Int<8>{}, Int<1>{});
  if (n <= 16 * V) return f(Int<16>{}, Int<1>{});
  if (n <= 32 * V) return f(Int<32>{}, Int<1>{});
  if (n <= 64 * V) return f(Int<32>{}, Int<2>{});
  if (n <= 128 * V) return f(Int<32>{}, Int<4>{});
  if (n <= 256 * V) return f(Int<32>{}, Int<8>{});
  if constexpr (V == 1) {
    if (n <= 512) return f(Int<32>{}, Int<16>{});
    return f(Int<32>{}, Int<32>{});
  }
  return cudaErrorInvalidValue;  // n > 1024
}

template <typename T>
struct SelectiveScan {
  static cudaError_t run(void* out, const void* u, const void* delta, const float* a, const void* bm, const void* cm,
                         const float* d, const void* z, const float* dbias, float* state, const ScanShape& sh,
                         cudaStream_t stream) {
    const int64_t n = sh.n;
    if (n < 1 || n > launch::kSelectiveScanMaxState || sh.head_dim < 1 || sh.groups < 1 ||
        sh.channels % sh.head_dim != 0 || (sh.channels / sh.head_dim) % sh.groups != 0)
      return cudaErrorInvalidValue;
    if (sh.batch <= 0 || sh.len <= 0 || sh.channels <= 0) return cudaSuccess;
    auto go = [&](auto v) {
      return with_shape<decltype(v)::value>(n, [&](auto g, auto q) {
        return launch_with<T, decltype(g)::value, decltype(q)::value, decltype(v)::value>(out, u, delta, a, bm, cm, d,
                                                                                          z, dbias, state, sh, stream);
      });
    };
    const auto aligned = [](const void* ptr, size_t bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; };
    if (n % 4 == 0 && aligned(a, 16) && aligned(state, 16) && aligned(bm, 4 * sizeof(T)) && aligned(cm, 4 * sizeof(T)))
      return go(Int<4>{});
    return go(Int<1>{});
  }
};

}  // namespace

cudaError_t launch::selective_scan(void* out, const void* u, const void* delta, const float* a, const void* bm,
                                   const void* cm, const float* d, const void* z, const float* delta_bias,
                                   float* ssm_state, Elem elem, int64_t batch, int64_t len, int64_t channels,
                                   int64_t state, bool delta_softplus, cudaStream_t stream) {
  ScanShape sh{batch, len, channels, state};
  sh.softplus = delta_softplus;
  return FK_CUDA_DISPATCH_ELEM(elem, SelectiveScan, out, u, delta, a, bm, cm, d, z, delta_bias, ssm_state, sh, stream);
}

cudaError_t launch::ssd_scan(void* out, const void* x, const void* dt, const float* a, const void* bm, const void* cm,
                             const float* d, const void* z, const float* dt_bias, float* ssm_state, Elem elem,
                             int64_t batch, int64_t len, int64_t heads, int64_t head_dim, int64_t groups, int64_t state,
                             const SsdDt& dt_rule, cudaStream_t stream) {
  ScanShape sh{batch, len, heads * head_dim, state, head_dim, groups};
  sh.a_per_head = true;
  sh.softplus = dt_rule.softplus;
  sh.dt_min = dt_rule.min;
  sh.dt_max = dt_rule.max;
  return FK_CUDA_DISPATCH_ELEM(elem, SelectiveScan, out, x, dt, a, bm, cm, d, z, dt_bias, ssm_state, sh, stream);
}

}  // namespace fk::cuda
