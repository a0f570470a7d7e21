// Test zoo — oob_read (CUDA): a correct silu_and_mul whose last row also reads one
// element just past the end of its input. The value read never changes the result, so
// no output gate can see it: the guard bands around the input are read, not written.
// Expected verdict: PASSED without a memory checker; under `fk check --sanitize`
// (compute-sanitizer memcheck, told through NVTX that only the call's tensors are in
// use) INCORRECT_SHAPE, a memory error.
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

// 0 when out [..., d] and input [..., 2d] share one float dtype; else the code.
inline int check_silu_and_mul(const fk_context* ctx, fk_t out, fk_t input, int32_t device) {
  if (ctx == nullptr || out == nullptr || input == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != device) return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: wrong device for this candidate");
  bool ok = out->ndim >= 1 && out->ndim <= FK_MAX_DIMS && input->ndim == out->ndim &&
            input->shape[input->ndim - 1] == 2 * out->shape[out->ndim - 1];
  for (int32_t k = 0; ok && k + 1 < out->ndim; ++k) ok = input->shape[k] == out->shape[k];
  if (!ok) return fail(ctx, FK_ERROR_INVALID, "silu_and_mul: expected out [..., d] and input [..., 2d]");
  if (out->dtype != input->dtype ||
      (out->dtype != FK_DTYPE_F32 && out->dtype != FK_DTYPE_F16 && out->dtype != FK_DTYPE_BF16))
    return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: dtype must be fp32, fp16 or bf16, the same for both");
  return FK_OK;
}

// A correct silu_and_mul over rows [0, gridDim.x): one block per row. The misbehaviour:
// thread 0 of the last row also loads the element after the input's last one; it
// writes only if that element holds a bit pattern no guard band does.
template <typename E>
__global__ void silu_and_mul_kernel(typename E::T* out, const typename E::T* x, int64_t d) {
  const int64_t row = blockIdx.x;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float g = E::load(x[row * 2 * d + i]);
    out[row * d + i] = E::store(g / (1.0f + expf(-g)) * E::load(x[row * 2 * d + d + i]));
  }
  if (row + 1 == gridDim.x && threadIdx.x == 0) {
    const volatile typename E::T* past = x + (row + 1) * 2 * d;
    if (E::load(*past) == 1234.5f) out[0] = E::store(0.0f);
  }
}

// Enqueues silu_and_mul_kernel for rows [0, rows) of `dtype` on `stream`.
void silu_and_mul_enqueue(int32_t dtype, void* out, const void* x, int64_t rows, int64_t d, cudaStream_t stream) {
  if (rows == 0) return;
  const auto grid = static_cast<unsigned>(rows);
  const int threads = block_threads(d);
  if (dtype == FK_DTYPE_F32)
    silu_and_mul_kernel<F32><<<grid, threads, 0, stream>>>(static_cast<float*>(out), static_cast<const float*>(x), d);
  else if (dtype == FK_DTYPE_F16)
    silu_and_mul_kernel<F16>
        <<<grid, threads, 0, stream>>>(static_cast<uint16_t*>(out), static_cast<const uint16_t*>(x), d);
  else
    silu_and_mul_kernel<BF16>
        <<<grid, threads, 0, stream>>>(static_cast<uint16_t*>(out), static_cast<const uint16_t*>(x), d);
}

}  // namespace

extern "C" int fk_candidate_silu_and_mul(const fk_context* ctx, fk_t out, fk_t input) {
  const int rc = check_silu_and_mul(ctx, out, input, FK_DEVICE_CUDA);
  if (rc != FK_OK) return rc;
  const int64_t d = out->shape[out->ndim - 1], n = numel(out);
  if (n == 0) return FK_OK;
  const auto stream = static_cast<cudaStream_t>(ctx->stream);
  silu_and_mul_enqueue(out->dtype, out->data, input->data, n / d, d, stream);
  return launch_status(ctx, "silu_and_mul");
}

static_assert(std::is_same<decltype(&fk_candidate_silu_and_mul), fk_act_and_mul_fn>::value,
              "signature of silu_and_mul");
