// rms_norm, CUDA candidate (vLLM's rms_norm(result, input, weight, epsilon)):
//   result[r, :] = input[r, :] / sqrt(mean(input[r, :]^2) + epsilon) * weight
// One block per row; 16-byte loads and stores when the row length and the pointers
// allow, else one element at a time; fp32 accumulation with a warp-shuffle block
// reduction; each output rounded once to the element type (fp16/bf16 as raw 16-bit
// patterns, round to nearest even). Everything is enqueued on ctx->stream; nothing
// synchronises and nothing is kept between calls.
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

// ---- block reduction ----------------------------------------------------------------

// Sum of v over the block (blockDim.x a multiple of 32, at most 1024), returned to
// every thread: warp shuffles, then one warp over the per-warp partial sums.
__device__ float block_sum(float v) {
  __shared__ float partial[32];
  __shared__ float total;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x >> 5) ? partial[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
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

// Threads for a block that walks `items` items per row: a multiple of 32 in [32, 1024].
inline int block_threads(int64_t items) {
  const int64_t t = (items + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : t > 1024 ? 1024 : t);
}

inline int64_t numel(fk_t t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

inline bool same_shape(fk_t a, fk_t b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; ++d)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// ---- the operator -----------------------------------------------------------------

template <typename E, int V>
__global__ void rms_norm_kernel(typename E::T* __restrict__ out, const typename E::T* __restrict__ x,
                                const typename E::T* __restrict__ w, int64_t h, float eps) {
  using T = typename E::T;
  const T* xr = x + static_cast<int64_t>(blockIdx.x) * h;
  T* outr = out + static_cast<int64_t>(blockIdx.x) * h;
  const int64_t packs = h / V;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < packs; i += blockDim.x) {
    const Pack<T, V> p = load_pack<T, V>(xr + i * V);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float v = E::load(p.v[k]);
      ss += v * v;
    }
  }
  const float inv = 1.0f / sqrtf(block_sum(ss) / static_cast<float>(h) + eps);
  for (int64_t i = threadIdx.x; i < packs; i += blockDim.x) {
    const Pack<T, V> p = load_pack<T, V>(xr + i * V), g = load_pack<T, V>(w + i * V);
    Pack<T, V> o;
#pragma unroll
    for (int k = 0; k < V; ++k) o.v[k] = E::store(E::load(p.v[k]) * inv * E::load(g.v[k]));
    store_pack<T, V>(outr + i * V, o);
  }
}

template <typename E>
int rms_norm_launch(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, int64_t rows, int64_t h, float eps) {
  using T = typename E::T;
  constexpr int V = 16 / sizeof(T);
  auto* out = static_cast<T*>(result->data);
  const auto* x = static_cast<const T*>(input->data);
  const auto* w = static_cast<const T*>(weight->data);
  const auto stream = static_cast<cudaStream_t>(ctx->stream);
  const auto grid = static_cast<unsigned>(rows);
  if (h % V == 0 && aligned16(out) && aligned16(x) && aligned16(w))
    rms_norm_kernel<E, V><<<grid, block_threads(h / V), 0, stream>>>(out, x, w, h, eps);
  else
    rms_norm_kernel<E, 1><<<grid, block_threads(h), 0, stream>>>(out, x, w, h, eps);
  return launch_status(ctx, "rms_norm");
}

}  // namespace

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double epsilon) {
  if (ctx == nullptr || result == nullptr || input == nullptr || weight == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != FK_DEVICE_CUDA) return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: this candidate runs on CUDA");
  if (input->ndim < 1 || input->ndim > FK_MAX_DIMS || !same_shape(result, input) || weight->ndim != 1 ||
      weight->shape[0] != input->shape[input->ndim - 1])
    return fail(ctx, FK_ERROR_INVALID, "rms_norm: expected result and input [..., H] and weight [H]");
  if (result->dtype != input->dtype || weight->dtype != input->dtype)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: result, input and weight must share one dtype");
  const int64_t h = input->shape[input->ndim - 1], n = numel(input);
  if (n == 0) return FK_OK;
  const int64_t rows = n / h;
  if (rows > 0x7fffffff) return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: more than 2^31 - 1 rows");
  const float eps = static_cast<float>(epsilon);
  switch (input->dtype) {
    case FK_DTYPE_F32:
      return rms_norm_launch<F32>(ctx, result, input, weight, rows, h, eps);
    case FK_DTYPE_F16:
      return rms_norm_launch<F16>(ctx, result, input, weight, rows, h, eps);
    case FK_DTYPE_BF16:
      return rms_norm_launch<BF16>(ctx, result, input, weight, rows, h, eps);
    default:
      return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: dtype must be fp32, fp16 or bf16");
  }
}

// The entry must have the operator's exact signature.
static_assert(std::is_same<decltype(&fk_candidate_rms_norm), fk_rms_norm_fn>::value, "signature of rms_norm");
