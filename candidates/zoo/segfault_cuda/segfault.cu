// Test zoo — segfault (CUDA): an rms_norm whose kernel stores its rows through a null
// device pointer; the GPU reports an illegal memory access (cudaErrorIllegalAddress),
// which poisons the CUDA context of the process. Expected verdict: CRASHED, reason
// "illegal".
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

// 0 when result/input [..., H] and weight [H] share one float dtype; else the code.
inline int check_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, int32_t device) {
  if (ctx == nullptr || result == nullptr || input == nullptr || weight == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != device) return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: wrong device for this candidate");
  if (input->ndim < 1 || input->ndim > FK_MAX_DIMS || !same_shape(result, input) || weight->ndim != 1 ||
      weight->shape[0] != input->shape[input->ndim - 1])
    return fail(ctx, FK_ERROR_INVALID, "rms_norm: expected result and input [..., H] and weight [H]");
  if (result->dtype != input->dtype || weight->dtype != input->dtype ||
      (input->dtype != FK_DTYPE_F32 && input->dtype != FK_DTYPE_F16 && input->dtype != FK_DTYPE_BF16))
    return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: dtype must be fp32, fp16 or bf16, the same for all");
  return FK_OK;
}

// A correct rms_norm: one block per row, fp32 accumulation, one rounding per output.
template <typename E>
__global__ void rms_norm_kernel(typename E::T* out, const typename E::T* x, const typename E::T* w, int64_t h,
                                float eps) {
  const int64_t row = blockIdx.x;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
    const float v = E::load(x[row * h + i]);
    ss += v * v;
  }
  const float inv = 1.0f / sqrtf(block_sum(ss) / static_cast<float>(h) + eps);
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x)
    out[row * h + i] = E::store(E::load(x[row * h + i]) * inv * E::load(w[i]));
}

// Enqueues rms_norm_kernel for `dtype` (fp32, fp16 or bf16) on `stream`.
void rms_norm_enqueue(int32_t dtype, void* out, const void* x, const void* w, int64_t rows, int64_t h, float eps,
                      cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(rows);
  const int threads = block_threads(h);
  if (dtype == FK_DTYPE_F32)
    rms_norm_kernel<F32><<<grid, threads, 0, stream>>>(static_cast<float*>(out), static_cast<const float*>(x),
                                                       static_cast<const float*>(w), h, eps);
  else if (dtype == FK_DTYPE_F16)
    rms_norm_kernel<F16><<<grid, threads, 0, stream>>>(static_cast<uint16_t*>(out), static_cast<const uint16_t*>(x),
                                                       static_cast<const uint16_t*>(w), h, eps);
  else
    rms_norm_kernel<BF16><<<grid, threads, 0, stream>>>(static_cast<uint16_t*>(out), static_cast<const uint16_t*>(x),
                                                        static_cast<const uint16_t*>(w), h, eps);
}

void* volatile g_nowhere = nullptr;  // never set

}  // namespace

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double epsilon) {
  const int rc = check_rms_norm(ctx, result, input, weight, FK_DEVICE_CUDA);
  if (rc != FK_OK) return rc;
  const int64_t h = input->shape[input->ndim - 1], n = numel(input);
  if (n == 0) return FK_OK;
  // The misbehaviour: the output pointer handed to the kernel is null.
  rms_norm_enqueue(input->dtype, g_nowhere, input->data, weight->data, n / h, h, static_cast<float>(epsilon),
                   static_cast<cudaStream_t>(ctx->stream));
  return launch_status(ctx, "rms_norm");
}

static_assert(std::is_same<decltype(&fk_candidate_rms_norm), fk_rms_norm_fn>::value, "signature of rms_norm");
