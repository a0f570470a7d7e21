// rotary_embedding, CUDA candidate (vLLM's rotary_embedding(positions, query, key,
// head_size, cos_sin_cache, is_neox)): rotates, in place, the first rot_dim =
// cos_sin_cache.shape[1] dimensions of every head of query [T, Hq * head_size] and
// key [T, Hk * head_size] by the angles of row positions[t] of cos_sin_cache
// [max_positions, rot_dim] (cos in its first half, sin in its second). neox style
// pairs dimension i with i + rot_dim/2; gpt-j style pairs 2i with 2i + 1. Dimensions
// past rot_dim are left as they are. positions are int32 or int64, on the device; a
// token whose position lies outside the cache is left unrotated (nothing is read out
// of bounds). A 2-D grid (pairs x tokens): from 16 tokens on (neox, aligned) 16-byte packs
// of pairs per thread, else one thread per rotated pair; fp32 arithmetic, one rounding
// per store. Everything is enqueued on ctx->stream.
#include "fk_kernel.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

// ---- 16-bit element patterns ------------------------------------------------------
// fp16/bf16 travel as raw uint16_t patterns; the hardware's cvt instructions convert
// them (.rn: round to nearest, ties to even, on the way down).

__device__ __forceinline__ float f16_to_f32(uint16_t b) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(b));
  return f;
}
__device__ __forceinline__ uint16_t f32_to_f16(float f) {
  uint16_t b;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}
__device__ __forceinline__ float bf16_to_f32(uint16_t b) { return __uint_as_float(static_cast<uint32_t>(b) << 16); }
__device__ __forceinline__ uint16_t f32_to_bf16(float f) {
  uint16_t b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}

// Element types: the stored type T, load to float, round once back.
struct F32 {
  using T = float;
  __device__ static float load(float v) { return v; }
  __device__ static float store(float v) { return v; }
};
struct F16 {
  using T = uint16_t;
  __device__ static float load(uint16_t v) { return f16_to_f32(v); }
  __device__ static uint16_t store(float v) { return f32_to_f16(v); }
};
struct BF16 {
  using T = uint16_t;
  __device__ static float load(uint16_t v) { return bf16_to_f32(v); }
  __device__ static uint16_t store(float v) { return f32_to_bf16(v); }
};

// V consecutive elements moved as one 16-byte access (V = 16 / sizeof(T)), or one
// element when V == 1.
template <typename T, int V>
union Pack {
  static_assert(V * sizeof(T) == 16 || V == 1, "a pack is 16 bytes or one element");
  using Raw = typename std::conditional<V == 1, T, uint4>::type;
  Raw raw;
  T v[V];
};
template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load_pack(const T* p) {
  Pack<T, V> k;
  k.raw = *reinterpret_cast<const typename Pack<T, V>::Raw*>(p);
  return k;
}
template <typename T, int V>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, V>& k) {
  *reinterpret_cast<typename Pack<T, V>::Raw*>(p) = k.raw;
}

// ---- arguments ----------------------------------------------------------------------

inline int fail(const fk_context* ctx, int code, const char* message) {
  if (ctx != nullptr && ctx->error != nullptr && ctx->error_capacity > 0)
    std::snprintf(ctx->error, static_cast<size_t>(ctx->error_capacity), "%s", message);
  return code;
}

// FK_OK after a launch, else FK_ERROR_RUNTIME with CUDA's message.
inline int launch_status(const fk_context* ctx, const char* op) {
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return FK_OK;
  if (ctx->error != nullptr && ctx->error_capacity > 0)
    std::snprintf(ctx->error, static_cast<size_t>(ctx->error_capacity), "%s: launch failed: %s", op,
                  cudaGetErrorString(e));
  return FK_ERROR_RUNTIME;
}

// ---- the operator -----------------------------------------------------------------

template <typename E, typename P>
__global__ void rotary_kernel(const P* __restrict__ positions, typename E::T* __restrict__ q,
                              typename E::T* __restrict__ k, const typename E::T* __restrict__ cache, int64_t max_pos,
                              int64_t tokens, int rot, int hs, int q_heads, int k_heads, bool neox) {
  using T = typename E::T;
  const int half = rot / 2, q_pairs = q_heads * half, pairs = (q_heads + k_heads) * half;
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= pairs) return;
  for (int64_t t = blockIdx.y; t < tokens; t += gridDim.y) {
    const int64_t p = static_cast<int64_t>(positions[t]);
    if (p < 0 || p >= max_pos) continue;
    const T* cs = cache + p * rot;
    const bool in_q = j < q_pairs;
    const int jj = in_q ? j : j - q_pairs, head = jj / half, i = jj % half;
    T* x = in_q ? q + (t * q_heads + head) * hs : k + (t * k_heads + head) * hs;
    const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    const float c = E::load(cs[i]), s = E::load(cs[half + i]);
    const float x1 = E::load(x[a]), x2 = E::load(x[b]);
    x[a] = E::store(x1 * c - x2 * s);
    x[b] = E::store(x2 * c + x1 * s);
  }
}

// neox style with V pairs per thread, moved as 16-byte packs: thread j of token t rotates
// pairs [i, i + V) of one head, x[i..] against x[half + i..], with cos and sin from the
// same offsets of the cache row. Needs half % V == 0, head_size % V == 0 and 16-byte
// aligned tensors (the launch checks).
template <typename E, typename P, int V>
__global__ void rotary_neox_packed_kernel(const P* __restrict__ positions, typename E::T* __restrict__ q,
                                          typename E::T* __restrict__ k, const typename E::T* __restrict__ cache,
                                          int64_t max_pos, int64_t tokens, int rot, int hs, int q_heads, int k_heads) {
  using T = typename E::T;
  const int half = rot / 2, chunks = half / V, q_items = q_heads * chunks, items = (q_heads + k_heads) * chunks;
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= items) return;
  const bool in_q = j < q_items;
  const int jj = in_q ? j : j - q_items, head = jj / chunks, i = (jj % chunks) * V;
  for (int64_t t = blockIdx.y; t < tokens; t += gridDim.y) {
    const int64_t p = static_cast<int64_t>(positions[t]);
    if (p < 0 || p >= max_pos) continue;
    const T* cs = cache + p * rot;
    T* x = in_q ? q + (t * q_heads + head) * hs : k + (t * k_heads + head) * hs;
    const Pack<T, V> c = load_pack<T, V>(cs + i), sn = load_pack<T, V>(cs + half + i);
    const Pack<T, V> a = load_pack<T, V>(x + i), b = load_pack<T, V>(x + half + i);
    Pack<T, V> ya, yb;
#pragma unroll
    for (int m = 0; m < V; ++m) {
      const float cv = E::load(c.v[m]), sv = E::load(sn.v[m]), x1 = E::load(a.v[m]), x2 = E::load(b.v[m]);
      ya.v[m] = E::store(x1 * cv - x2 * sv);
      yb.v[m] = E::store(x2 * cv + x1 * sv);
    }
    store_pack<T, V>(x + i, ya);
    store_pack<T, V>(x + half + i, yb);
  }
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename E, typename P>
int rotary_launch(const fk_context* ctx, fk_t positions, fk_t query, fk_t key, fk_t cache, int hs, bool neox) {
  using T = typename E::T;
  const int64_t tokens = positions->shape[0];
  const int rot = static_cast<int>(cache->shape[1]);
  const int q_heads = static_cast<int>(query->shape[1] / hs);
  const int k_heads = key != nullptr ? static_cast<int>(key->shape[1] / hs) : 0;
  T* k = key != nullptr ? static_cast<T*>(key->data) : nullptr;
  // A 2-D grid: x splits a token's rotation pairs over blocks, y walks the tokens, so a
  // decode step's few tokens still fill the GPU.
  const int pairs = (q_heads + k_heads) * (rot / 2);
  if (pairs == 0 || tokens == 0) return FK_OK;
  constexpr int V = static_cast<int>(16 / sizeof(T));
  // From 16 tokens on, V pairs per thread in 16-byte packs (fewer, wider accesses); for
  // fewer tokens one pair per thread, so that a decode step has threads enough.
  if (neox && tokens >= 16 && (rot / 2) % V == 0 && hs % V == 0 && aligned16(query->data) &&
      (k == nullptr || aligned16(k)) && aligned16(cache->data)) {
    constexpr int kPackThreads = 64;
    const int items = (q_heads + k_heads) * (rot / 2 / V);
    const dim3 grid(static_cast<unsigned>((items + kPackThreads - 1) / kPackThreads),
                    static_cast<unsigned>(tokens < 65535 ? tokens : 65535));
    rotary_neox_packed_kernel<E, P, V><<<grid, kPackThreads, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
        static_cast<const P*>(positions->data), static_cast<T*>(query->data), k, static_cast<const T*>(cache->data),
        cache->shape[0], tokens, rot, hs, q_heads, k_heads);
    return launch_status(ctx, "rotary_embedding");
  }
  constexpr int kThreads = 128;
  const dim3 grid(static_cast<unsigned>((pairs + kThreads - 1) / kThreads),
                  static_cast<unsigned>(tokens < 65535 ? tokens : 65535));
  rotary_kernel<E, P><<<grid, kThreads, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      static_cast<const P*>(positions->data), static_cast<T*>(query->data), k, static_cast<const T*>(cache->data),
      cache->shape[0], tokens, rot, hs, q_heads, k_heads, neox);
  return launch_status(ctx, "rotary_embedding");
}

template <typename E>
int rotary_dispatch(const fk_context* ctx, fk_t positions, fk_t query, fk_t key, fk_t cache, int hs, bool neox) {
  if (positions->dtype == FK_DTYPE_I64) return rotary_launch<E, int64_t>(ctx, positions, query, key, cache, hs, neox);
  return rotary_launch<E, int32_t>(ctx, positions, query, key, cache, hs, neox);
}

}  // namespace

extern "C" int fk_candidate_rotary_embedding(const fk_context* ctx, fk_t positions, fk_t query, fk_t key,
                                             fk_t cos_sin_cache, double head_size, double is_neox) {
  if (ctx == nullptr || positions == nullptr || query == nullptr || cos_sin_cache == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != FK_DEVICE_CUDA)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "rotary_embedding: this candidate runs on CUDA");
  if (key != nullptr && (key->data == nullptr || key->ndim == 0)) key = nullptr;  // absent key: rotate query only
  if (positions->ndim != 1 || (positions->dtype != FK_DTYPE_I32 && positions->dtype != FK_DTYPE_I64))
    return fail(ctx, FK_ERROR_INVALID, "rotary_embedding: positions must be a 1-d int32 or int64 tensor");
  const int64_t tokens = positions->shape[0];
  const int64_t hs = static_cast<int64_t>(head_size);
  if (query->ndim != 2 || query->shape[0] != tokens ||
      (key != nullptr && (key->ndim != 2 || key->shape[0] != tokens)) || cos_sin_cache->ndim != 2 ||
      static_cast<double>(hs) != head_size || hs <= 0 || query->shape[1] % hs != 0 ||
      (key != nullptr && key->shape[1] % hs != 0))
    return fail(ctx, FK_ERROR_INVALID,
                "rotary_embedding: expected positions [T], query [T, Hq*head_size], key [T, Hk*head_size], "
                "cos_sin_cache [P, rot_dim]");
  const int64_t rot = cos_sin_cache->shape[1];
  if (rot % 2 != 0 || rot > hs)
    return fail(ctx, FK_ERROR_INVALID, "rotary_embedding: rot_dim must be even and at most head_size");
  if (query->dtype != cos_sin_cache->dtype || (key != nullptr && key->dtype != query->dtype))
    return fail(ctx, FK_ERROR_UNSUPPORTED, "rotary_embedding: query, key and cos_sin_cache must share one dtype");
  if (tokens > 0x7fffffff || query->shape[1] > 0x7fffffff || (key != nullptr && key->shape[1] > 0x7fffffff))
    return fail(ctx, FK_ERROR_UNSUPPORTED, "rotary_embedding: sizes above 2^31 - 1");
  if (tokens == 0 || rot == 0) return FK_OK;
  const int h = static_cast<int>(hs);
  const bool neox = is_neox != 0.0;
  switch (query->dtype) {
    case FK_DTYPE_F32:
      return rotary_dispatch<F32>(ctx, positions, query, key, cos_sin_cache, h, neox);
    case FK_DTYPE_F16:
      return rotary_dispatch<F16>(ctx, positions, query, key, cos_sin_cache, h, neox);
    case FK_DTYPE_BF16:
      return rotary_dispatch<BF16>(ctx, positions, query, key, cos_sin_cache, h, neox);
    default:
      return fail(ctx, FK_ERROR_UNSUPPORTED, "rotary_embedding: dtype must be fp32, fp16 or bf16");
  }
}

// The entry must have the operator's exact signature.
static_assert(std::is_same<decltype(&fk_candidate_rotary_embedding), fk_rotary_embedding_fn>::value,
              "signature of rotary_embedding");
