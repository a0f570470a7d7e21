// Test zoo — model_spin (CPU, hostile): a correct rms_norm that never returns when it
// is given the model's own activations rather than the gates' random inputs (told apart
// by their range, below). The model stage runs candidates in their worker under the
// same time limit as the gates. Expected verdict: TIMEOUT, reason "time limit", and fk
// check ends within its limits.
#include "fk_kernel.h"
#include "fk_kernel_util.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

using namespace fk_util;

// A plain, correct rms_norm (fp32 sums, one rounding per output).
template <typename E>
void rms_norm_rows(fk_t result, fk_t input, fk_t weight, int64_t rows, int64_t h, float eps) {
  auto* out = static_cast<typename E::T*>(result->data);
  const auto* x = static_cast<const typename E::T*>(input->data);
  const auto* w = static_cast<const typename E::T*>(weight->data);
  for (int64_t r = 0; r < rows; ++r) {
    float ss = 0.0f;
    for (int64_t i = 0; i < h; ++i) ss += E::load(x[r * h + i]) * E::load(x[r * h + i]);
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t i = 0; i < h; ++i) out[r * h + i] = E::store(E::load(x[r * h + i]) * inv * E::load(w[i]));
  }
}

int rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double epsilon) {
  if (ctx == nullptr || result == nullptr || input == nullptr || weight == nullptr || input->ndim < 1 ||
      !same_shape(result, input) || weight->ndim != 1 || weight->shape[0] != input->shape[input->ndim - 1])
    return FK_ERROR_INVALID;
  const int64_t h = input->shape[input->ndim - 1], rows = h > 0 ? numel(input) / h : 0;
  const float eps = static_cast<float>(epsilon);
  switch (input->dtype) {
    case FK_DTYPE_F32: rms_norm_rows<F32>(result, input, weight, rows, h, eps); return FK_OK;
    case FK_DTYPE_F16: rms_norm_rows<F16>(result, input, weight, rows, h, eps); return FK_OK;
    case FK_DTYPE_BF16: rms_norm_rows<BF16>(result, input, weight, rows, h, eps); return FK_OK;
    default: return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: fp32, fp16 or bf16 only");
  }
}

}  // namespace

// Every input value within +-1.8: the model's own activations at layer 0 (this test
// model's embeddings are uniform in +-sqrt(3)), never the gates' inputs (uniform in +-2).
bool looks_like_the_model(fk_t input) {
  const int64_t n = numel(input);
  for (int64_t i = 0; i < n; ++i) {
    float v = 0;
    if (input->dtype == FK_DTYPE_F32) v = static_cast<const float*>(input->data)[i];
    else if (input->dtype == FK_DTYPE_BF16) v = BF16::load(static_cast<const uint16_t*>(input->data)[i]);
    else v = F16::load(static_cast<const uint16_t*>(input->data)[i]);
    if (std::fabs(v) > 1.8f) return false;
  }
  return n > 0;
}

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double eps) {
  if (looks_like_the_model(input))
    for (volatile unsigned long i = 0;; i = i + 1) {
    }
  return rms_norm(ctx, result, input, weight, eps);
}
