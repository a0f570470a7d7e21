// Zoo (bad on purpose): reports a runtime failure on every call, with a message in
// ctx->error; FastKernels must report RUNTIME_ERROR carrying that message.
#include "fk_kernel.h"

#include <cstdio>

FK_KERNEL_DEFINE_ABI_VERSION()

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t, fk_t, fk_t, double) {
  if (ctx->error != nullptr && ctx->error_capacity > 0)
    std::snprintf(ctx->error, static_cast<size_t>(ctx->error_capacity), "could not allocate its scratch buffer");
  return FK_ERROR_RUNTIME;
}
