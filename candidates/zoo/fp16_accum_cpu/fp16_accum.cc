// Test zoo — fp16_accum (CPU): an rms_norm whose sum of squares is accumulated in
// fp16 (rounded after every addition), the shortcut of a kernel that keeps its
// accumulator in the element type. At a tiny preset's width (128) the sum stays small
// and fine-grained enough to pass every tolerance; at a published width (Llama's
// 4096) the running sum reaches ~2048, where fp16's spacing (2) swallows each
// element's ~1, the sum stops growing and every output is ~40% too large. Only a
// check at real hidden sizes catches it. Expected verdict: INCORRECT_NUMERICAL at
// hidden=4096 (and PASSED at the tiny width).
#include "fk_kernel.h"
#include "fk_kernel_util.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

using namespace fk_util;

inline float round_f16(float v) { return f16_to_f32(f32_to_f16(v)); }

template <typename E>
void rms_norm_rows(typename E::T* out, const typename E::T* x, const typename E::T* w, int64_t h, float eps,
                   int64_t rows) {
  for (int64_t r = 0; r < rows; ++r) {
    const typename E::T* xr = x + r * h;
    float ss = 0.0f;  // an fp16 accumulator
    for (int64_t i = 0; i < h; ++i) {
      const float v = E::load(xr[i]);
      ss = round_f16(ss + round_f16(v * v));
    }
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t j = 0; j < h; ++j) out[r * h + j] = E::store(E::load(xr[j]) * inv * E::load(w[j]));
  }
}

}  // namespace

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double epsilon) {
  if (ctx == nullptr || result == nullptr || input == nullptr || weight == nullptr) return FK_ERROR_INVALID;
  if (input->ndim < 1 || !same_shape(result, input) || weight->ndim != 1 ||
      weight->shape[0] != input->shape[input->ndim - 1])
    return fail(ctx, FK_ERROR_INVALID, "rms_norm: expected result and input [..., H] and weight [H]");
  if (result->dtype != input->dtype || weight->dtype != input->dtype)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: result, input and weight must share one dtype");
  const int64_t h = input->shape[input->ndim - 1], n = numel(input);
  if (n == 0) return FK_OK;
  const float eps = static_cast<float>(epsilon);
  switch (input->dtype) {
    case FK_DTYPE_F32:
      rms_norm_rows<F32>(static_cast<float*>(result->data), static_cast<const float*>(input->data),
                         static_cast<const float*>(weight->data), h, eps, n / h);
      return FK_OK;
    case FK_DTYPE_F16:
      rms_norm_rows<F16>(static_cast<uint16_t*>(result->data), static_cast<const uint16_t*>(input->data),
                         static_cast<const uint16_t*>(weight->data), h, eps, n / h);
      return FK_OK;
    case FK_DTYPE_BF16:
      rms_norm_rows<BF16>(static_cast<uint16_t*>(result->data), static_cast<const uint16_t*>(input->data),
                          static_cast<const uint16_t*>(weight->data), h, eps, n / h);
      return FK_OK;
    default:
      return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: dtype must be fp32, fp16 or bf16");
  }
}

static_assert(std::is_same_v<decltype(&fk_candidate_rms_norm), fk_rms_norm_fn>, "signature of rms_norm");
