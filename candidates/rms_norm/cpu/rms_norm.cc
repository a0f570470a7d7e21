// rms_norm, CPU candidate (vLLM's rms_norm(result, input, weight, epsilon)):
//   result[r, :] = input[r, :] / sqrt(mean(input[r, :]^2) + epsilon) * weight
// over the last dimension of a contiguous [..., H] tensor. Sums of squares accumulate
// in fp32 (16 lanes, so the compiler can vectorise without reassociating); each output
// is rounded once to the element type. fp16/bf16 are raw 16-bit patterns converted
// with round-to-nearest-even. Rows are split over at most ctx->num_threads
// std::threads, all joined before returning; nothing is kept between calls.
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
void rms_norm_rows(typename E::T* __restrict out, const typename E::T* __restrict x, const typename E::T* __restrict w,
                   int64_t h, float eps, int64_t begin, int64_t end) {
  constexpr int kLanes = 16;
  for (int64_t r = begin; r < end; ++r) {
    const typename E::T* xr = x + r * h;
    typename E::T* outr = out + r * h;
    float lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= h; i += kLanes)
      for (int k = 0; k < kLanes; ++k) {
        const float v = E::load(xr[i + k]);
        lane[k] += v * v;
      }
    float ss = 0.0f;
    for (; i < h; ++i) {
      const float v = E::load(xr[i]);
      ss += v * v;
    }
    for (int k = 0; k < kLanes; ++k) ss += lane[k];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t j = 0; j < h; ++j) outr[j] = E::store(E::load(xr[j]) * inv * E::load(w[j]));
  }
}

template <typename E>
void rms_norm_run(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, int64_t rows, int64_t h, float eps) {
  auto* out = static_cast<typename E::T*>(result->data);
  const auto* x = static_cast<const typename E::T*>(input->data);
  const auto* w = static_cast<const typename E::T*>(weight->data);
  for_rows(ctx->num_threads, rows, h,
           [=](int64_t begin, int64_t end) { rms_norm_rows<E>(out, x, w, h, eps, begin, end); });
}

}  // namespace

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double epsilon) {
  if (ctx == nullptr || result == nullptr || input == nullptr || weight == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != FK_DEVICE_CPU) return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: this candidate runs on the CPU");
  if (input->ndim < 1 || input->ndim > FK_MAX_DIMS || !same_shape(result, input) || weight->ndim != 1 ||
      weight->shape[0] != input->shape[input->ndim - 1])
    return fail(ctx, FK_ERROR_INVALID, "rms_norm: expected result and input [..., H] and weight [H]");
  if (result->dtype != input->dtype || weight->dtype != input->dtype)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: result, input and weight must share one dtype");
  const int64_t h = input->shape[input->ndim - 1], n = numel(input);
  if (n == 0) return FK_OK;
  const int64_t rows = n / h;
  const float eps = static_cast<float>(epsilon);
  try {
    switch (input->dtype) {
      case FK_DTYPE_F32:
        rms_norm_run<F32>(ctx, result, input, weight, rows, h, eps);
        return FK_OK;
      case FK_DTYPE_F16:
        rms_norm_run<F16>(ctx, result, input, weight, rows, h, eps);
        return FK_OK;
      case FK_DTYPE_BF16:
        rms_norm_run<BF16>(ctx, result, input, weight, rows, h, eps);
        return FK_OK;
      default:
        return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: dtype must be fp32, fp16 or bf16");
    }
  } catch (...) {
    return fail(ctx, FK_ERROR_RUNTIME, "rms_norm: out of memory starting worker threads");
  }
}

// The entry must have the operator's exact signature.
static_assert(std::is_same_v<decltype(&fk_candidate_rms_norm), fk_rms_norm_fn>, "signature of rms_norm");
