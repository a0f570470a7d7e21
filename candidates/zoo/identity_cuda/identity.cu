// Test zoo — identity (CUDA): an rms_norm that copies input to result unchanged (a
// device-to-device cudaMemcpyAsync on ctx->stream). Expected verdict:
// INCORRECT_NUMERICAL, reason "outside tolerance".
#include "fk_kernel.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

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
  const int rc = check_rms_norm(ctx, result, input, weight, FK_DEVICE_CUDA);
  if (rc != FK_OK) return rc;
  // The misbehaviour: the input itself instead of the normalised rows.
  const size_t bytes = static_cast<size_t>(numel(input)) * element_size(input->dtype);
  const cudaError_t e = cudaMemcpyAsync(result->data, input->data, bytes, cudaMemcpyDeviceToDevice,
                                        static_cast<cudaStream_t>(ctx->stream));
  return e == cudaSuccess ? FK_OK : fail(ctx, FK_ERROR_RUNTIME, cudaGetErrorString(e));
}

static_assert(std::is_same<decltype(&fk_candidate_rms_norm), fk_rms_norm_fn>::value, "signature of rms_norm");
