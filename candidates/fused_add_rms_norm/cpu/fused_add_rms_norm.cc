// fused_add_rms_norm, CPU candidate (vLLM's fused_add_rms_norm(input, residual,
// weight, epsilon)), per row of contiguous [..., H] tensors:
//   residual = input + residual           (stored rounded to the element type)
//   input    = residual / sqrt(mean(residual^2) + epsilon) * weight
// The norm is computed from the rounded residual, as vLLM does. Both input and
// residual are overwritten. fp32 accumulation (16 lanes), one rounding per store,
// fp16/bf16 as raw 16-bit patterns with round-to-nearest-even. Rows are split over at
// most ctx->num_threads std::threads, all joined before returning.
#include "fk_kernel.h"
#include "fk_kernel_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

using namespace fk_util;

// ---- the operator -----------------------------------------------------------------

template <typename E>
void fused_add_rms_norm_rows(typename E::T* __restrict x, typename E::T* __restrict res,
                             const typename E::T* __restrict w, int64_t h, float eps, int64_t begin, int64_t end) {
  constexpr int kLanes = 16;
  for (int64_t r = begin; r < end; ++r) {
    typename E::T* xr = x + r * h;
    typename E::T* rr = res + r * h;
    float lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= h; i += kLanes)
      for (int k = 0; k < kLanes; ++k) {
        const typename E::T z = E::store(E::load(xr[i + k]) + E::load(rr[i + k]));
        rr[i + k] = z;
        const float v = E::load(z);
        lane[k] += v * v;
      }
    float ss = 0.0f;
    for (; i < h; ++i) {
      const typename E::T z = E::store(E::load(xr[i]) + E::load(rr[i]));
      rr[i] = z;
      const float v = E::load(z);
      ss += v * v;
    }
    for (int k = 0; k < kLanes; ++k) ss += lane[k];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t j = 0; j < h; ++j) xr[j] = E::store(E::load(rr[j]) * inv * E::load(w[j]));
  }
}

template <typename E>
void fused_add_rms_norm_run(const fk_context* ctx, fk_t input, fk_t residual, fk_t weight, int64_t rows, int64_t h,
                            float eps) {
  auto* x = static_cast<typename E::T*>(input->data);
  auto* res = static_cast<typename E::T*>(residual->data);
  const auto* w = static_cast<const typename E::T*>(weight->data);
  for_rows(ctx->num_threads, rows, h,
           [=](int64_t begin, int64_t end) { fused_add_rms_norm_rows<E>(x, res, w, h, eps, begin, end); });
}

}  // namespace

extern "C" int fk_candidate_fused_add_rms_norm(const fk_context* ctx, fk_t input, fk_t residual, fk_t weight,
                                               double epsilon) {
  if (ctx == nullptr || input == nullptr || residual == nullptr || weight == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != FK_DEVICE_CPU)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "fused_add_rms_norm: this candidate runs on the CPU");
  if (input->ndim < 1 || input->ndim > FK_MAX_DIMS || !same_shape(residual, input) || weight->ndim != 1 ||
      weight->shape[0] != input->shape[input->ndim - 1])
    return fail(ctx, FK_ERROR_INVALID, "fused_add_rms_norm: expected input and residual [..., H] and weight [H]");
  if (residual->dtype != input->dtype || weight->dtype != input->dtype)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "fused_add_rms_norm: input, residual and weight must share one dtype");
  const int64_t h = input->shape[input->ndim - 1], n = numel(input);
  if (n == 0) return FK_OK;
  const int64_t rows = n / h;
  const float eps = static_cast<float>(epsilon);
  try {
    switch (input->dtype) {
      case FK_DTYPE_F32:
        fused_add_rms_norm_run<F32>(ctx, input, residual, weight, rows, h, eps);
        return FK_OK;
      case FK_DTYPE_F16:
        fused_add_rms_norm_run<F16>(ctx, input, residual, weight, rows, h, eps);
        return FK_OK;
      case FK_DTYPE_BF16:
        fused_add_rms_norm_run<BF16>(ctx, input, residual, weight, rows, h, eps);
        return FK_OK;
      default:
        return fail(ctx, FK_ERROR_UNSUPPORTED, "fused_add_rms_norm: dtype must be fp32, fp16 or bf16");
    }
  } catch (...) {
    return fail(ctx, FK_ERROR_RUNTIME, "fused_add_rms_norm: out of memory starting worker threads");
  }
}

// The entry must have the operator's exact signature.
static_assert(std::is_same_v<decltype(&fk_candidate_fused_add_rms_norm), fk_fused_add_rms_norm_fn>,
              "signature of fused_add_rms_norm");
