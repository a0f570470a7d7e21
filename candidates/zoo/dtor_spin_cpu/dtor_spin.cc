// Test zoo — dtor_spin (CPU, hostile): a correct rms_norm with a static object whose destructor never
// returns. A process that unloads the library or runs static destructors at exit hangs;
// workers end with _Exit or are killed, so fk check ends. Expected verdict: PASSED.
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

struct Stubborn {
  ~Stubborn() {
    for (volatile unsigned long i = 0;; i = i + 1) {
    }
  }
};
Stubborn stubborn;

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double eps) {
  return rms_norm(ctx, result, input, weight, eps);
}
