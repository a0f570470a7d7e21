// Test zoo — zeros (CPU): an rms_norm that writes every element of result, all of
// them zero. Expected verdict: INCORRECT_NUMERICAL, reason "all zeros".
#include "fk_kernel.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

// ---- arguments ----------------------------------------------------------------------

inline int fail(const fk_context* ctx, int code, const char* message) {
  if (ctx != nullptr && ctx->error != nullptr && ctx->error_capacity > 0)
    std::snprintf(ctx->error, static_cast<size_t>(ctx->error_capacity), "%s", message);
  return code;
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

inline size_t element_size(int32_t dtype) { return dtype == FK_DTYPE_F32 ? 4 : 2; }

}  // namespace

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double epsilon) {
  (void)epsilon;
  const int rc = check_rms_norm(ctx, result, input, weight, FK_DEVICE_CPU);
  if (rc != FK_OK) return rc;
  // The misbehaviour: zeros instead of the normalised rows.
  std::memset(result->data, 0, static_cast<size_t>(numel(result)) * element_size(result->dtype));
  return FK_OK;
}

static_assert(std::is_same_v<decltype(&fk_candidate_rms_norm), fk_rms_norm_fn>, "signature of rms_norm");
