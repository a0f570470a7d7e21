// silu_and_mul, CUDA candidate (vLLM's silu_and_mul(out, input)), per row:
//   out[r, i] = silu(input[r, i]) * input[r, d + i],  silu(x) = x / (1 + exp(-x))
// for out [..., d] and input [..., 2d], contiguous. A 2-D grid: y walks the rows,
// x splits each row over blocks of 128 threads, one 16-byte pack per thread when d and
// the pointers allow (a decode step's few rows still fill the GPU); fp32 arithmetic (IEEE division, expf), one
// rounding per output (fp16/bf16 as raw 16-bit patterns, round to nearest even).
// Everything is enqueued on ctx->stream.
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

inline int64_t numel(fk_t t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// ---- the operator -----------------------------------------------------------------

__device__ __forceinline__ float silu(float g) { return g / (1.0f + expf(-g)); }

constexpr int kThreads = 128;

template <typename E, int V>
__global__ void silu_and_mul_kernel(typename E::T* __restrict__ out, const typename E::T* __restrict__ x, int64_t rows,
                                    int64_t d) {
  using T = typename E::T;
  const int64_t packs = d / V;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= packs) return;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const T* gate = x + r * 2 * d;
    const Pack<T, V> g = load_pack<T, V>(gate + i * V), u = load_pack<T, V>(gate + d + i * V);
    Pack<T, V> o;
#pragma unroll
    for (int k = 0; k < V; ++k) o.v[k] = E::store(silu(E::load(g.v[k])) * E::load(u.v[k]));
    store_pack<T, V>(out + r * d + i * V, o);
  }
}

inline dim3 grid_for(int64_t rows, int64_t packs) {
  const int64_t x = (packs + kThreads - 1) / kThreads;
  return dim3(static_cast<unsigned>(x), static_cast<unsigned>(rows < 65535 ? rows : 65535));
}

template <typename E>
int silu_and_mul_launch(const fk_context* ctx, fk_t out, fk_t input, int64_t rows, int64_t d) {
  using T = typename E::T;
  constexpr int V = 16 / sizeof(T);
  auto* o = static_cast<T*>(out->data);
  const auto* x = static_cast<const T*>(input->data);
  const auto stream = static_cast<cudaStream_t>(ctx->stream);
  if (d % V == 0 && aligned16(o) && aligned16(x))
    silu_and_mul_kernel<E, V><<<grid_for(rows, d / V), kThreads, 0, stream>>>(o, x, rows, d);
  else
    silu_and_mul_kernel<E, 1><<<grid_for(rows, d), kThreads, 0, stream>>>(o, x, rows, d);
  return launch_status(ctx, "silu_and_mul");
}

}  // namespace

extern "C" int fk_candidate_silu_and_mul(const fk_context* ctx, fk_t out, fk_t input) {
  if (ctx == nullptr || out == nullptr || input == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != FK_DEVICE_CUDA)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: this candidate runs on CUDA");
  bool ok = out->ndim >= 1 && out->ndim <= FK_MAX_DIMS && input->ndim == out->ndim &&
            input->shape[input->ndim - 1] == 2 * out->shape[out->ndim - 1];
  for (int32_t k = 0; ok && k + 1 < out->ndim; ++k) ok = input->shape[k] == out->shape[k];
  if (!ok) return fail(ctx, FK_ERROR_INVALID, "silu_and_mul: expected out [..., d] and input [..., 2d]");
  if (out->dtype != input->dtype)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: out and input must share one dtype");
  const int64_t d = out->shape[out->ndim - 1], n = numel(out);
  if (n == 0) return FK_OK;
  const int64_t rows = n / d;
  if (rows > 0x7fffffff) return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: more than 2^31 - 1 rows");
  switch (out->dtype) {
    case FK_DTYPE_F32:
      return silu_and_mul_launch<F32>(ctx, out, input, rows, d);
    case FK_DTYPE_F16:
      return silu_and_mul_launch<F16>(ctx, out, input, rows, d);
    case FK_DTYPE_BF16:
      return silu_and_mul_launch<BF16>(ctx, out, input, rows, d);
    default:
      return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: dtype must be fp32, fp16 or bf16");
  }
}

// The entry must have the operator's exact signature.
static_assert(std::is_same<decltype(&fk_candidate_silu_and_mul), fk_act_and_mul_fn>::value,
              "signature of silu_and_mul");
