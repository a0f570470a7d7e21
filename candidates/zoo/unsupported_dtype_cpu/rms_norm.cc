// Zoo: an fp32-only rms_norm (correct for fp32). Judged on bf16 workloads it is
// UNSUPPORTED: its manifest does not list bf16, and it returns FK_ERROR_UNSUPPORTED.
#include "fk_kernel.h"

#include <cmath>

FK_KERNEL_DEFINE_ABI_VERSION()

extern "C" int fk_candidate_rms_norm(const fk_context*, fk_t result, fk_t input, fk_t weight, double epsilon) {
  if (input->dtype != FK_DTYPE_F32) return FK_ERROR_UNSUPPORTED;
  const int64_t h = input->shape[input->ndim - 1];
  int64_t rows = 1;
  for (int32_t d = 0; d + 1 < input->ndim; ++d) rows *= input->shape[d];
  const float* x = static_cast<const float*>(input->data);
  const float* w = static_cast<const float*>(weight->data);
  float* out = static_cast<float*>(result->data);
  for (int64_t r = 0; r < rows; ++r) {
    float ss = 0;
    for (int64_t i = 0; i < h; ++i) ss += x[r * h + i] * x[r * h + i];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + static_cast<float>(epsilon));
    for (int64_t i = 0; i < h; ++i) out[r * h + i] = x[r * h + i] * inv * w[i];
  }
  return FK_OK;
}
