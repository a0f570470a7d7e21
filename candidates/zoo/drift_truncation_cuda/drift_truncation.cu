// Test zoo — drift_truncation (CUDA): a fused_add_rms_norm that is correct except that
// every store to a 16-bit type (the residual and the output) rounds toward zero
// (cvt.rz) instead of to nearest. Each call stays within tolerance (errors below
// 1 ulp), but the bias always points toward zero and compounds through the layers of
// a model. fp16 and bf16 only; fp32 returns FK_ERROR_UNSUPPORTED. Expected verdict:
// INCORRECT_NUMERICAL, reason "drifts".
#include "fk_kernel.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

// ---- 16-bit element patterns ------------------------------------------------------
// fp16/bf16 travel as raw uint16_t patterns; loads widen them exactly to fp32.

__device__ __forceinline__ float f16_to_f32(uint16_t b) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(b));
  return f;
}
__device__ __forceinline__ float bf16_to_f32(uint16_t b) { return __uint_as_float(static_cast<uint32_t>(b) << 16); }

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

// The misbehaviour: 16-bit stores truncate (round toward zero).
__device__ __forceinline__ uint16_t f32_to_f16_toward_zero(float f) {
  uint16_t b;
  asm("cvt.rz.f16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}
__device__ __forceinline__ uint16_t f32_to_bf16_toward_zero(float f) {
  uint16_t b;
  asm("cvt.rz.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}
struct F16TowardZero {
  using T = uint16_t;
  __device__ static float load(uint16_t v) { return f16_to_f32(v); }
  __device__ static uint16_t store(float v) { return f32_to_f16_toward_zero(v); }
};
struct BF16TowardZero {
  using T = uint16_t;
  __device__ static float load(uint16_t v) { return bf16_to_f32(v); }
  __device__ static uint16_t store(float v) { return f32_to_bf16_toward_zero(v); }
};

template <typename E>
__global__ void fused_add_rms_norm_kernel(uint16_t* x, uint16_t* res, const uint16_t* w, int64_t h, float eps) {
  const int64_t row = blockIdx.x;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
    const uint16_t z = E::store(E::load(x[row * h + i]) + E::load(res[row * h + i]));
    res[row * h + i] = z;
    const float v = E::load(z);
    ss += v * v;
  }
  const float inv = 1.0f / sqrtf(block_sum(ss) / static_cast<float>(h) + eps);
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x)
    x[row * h + i] = E::store(E::load(res[row * h + i]) * inv * E::load(w[i]));
}

}  // namespace

extern "C" int fk_candidate_fused_add_rms_norm(const fk_context* ctx, fk_t input, fk_t residual, fk_t weight,
                                               double epsilon) {
  if (ctx == nullptr || input == nullptr || residual == nullptr || weight == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != FK_DEVICE_CUDA)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "fused_add_rms_norm: this candidate runs on CUDA");
  if (input->ndim < 1 || input->ndim > FK_MAX_DIMS || !same_shape(residual, input) || weight->ndim != 1 ||
      weight->shape[0] != input->shape[input->ndim - 1])
    return fail(ctx, FK_ERROR_INVALID, "fused_add_rms_norm: expected input and residual [..., H] and weight [H]");
  if (residual->dtype != input->dtype || weight->dtype != input->dtype ||
      (input->dtype != FK_DTYPE_F16 && input->dtype != FK_DTYPE_BF16))
    return fail(ctx, FK_ERROR_UNSUPPORTED, "fused_add_rms_norm: this candidate handles fp16 and bf16 only");
  const int64_t h = input->shape[input->ndim - 1], n = numel(input);
  if (n == 0) return FK_OK;
  auto* x = static_cast<uint16_t*>(input->data);
  auto* res = static_cast<uint16_t*>(residual->data);
  const auto* w = static_cast<const uint16_t*>(weight->data);
  const auto grid = static_cast<unsigned>(n / h);
  const auto stream = static_cast<cudaStream_t>(ctx->stream);
  if (input->dtype == FK_DTYPE_F16)
    fused_add_rms_norm_kernel<F16TowardZero>
        <<<grid, block_threads(h), 0, stream>>>(x, res, w, h, static_cast<float>(epsilon));
  else
    fused_add_rms_norm_kernel<BF16TowardZero>
        <<<grid, block_threads(h), 0, stream>>>(x, res, w, h, static_cast<float>(epsilon));
  return launch_status(ctx, "fused_add_rms_norm");
}

static_assert(std::is_same<decltype(&fk_candidate_fused_add_rms_norm), fk_fused_add_rms_norm_fn>::value,
              "signature of fused_add_rms_norm");
