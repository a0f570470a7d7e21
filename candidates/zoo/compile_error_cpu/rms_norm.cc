// Zoo (bad on purpose): calls a function that does not exist, so the production build
// fails; FastKernels must report COMPILE_ERROR with the compiler's message.
#include "fk_kernel.h"

FK_KERNEL_DEFINE_ABI_VERSION()

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double epsilon) {
  return rms_norm_fast_path(ctx, result, input, weight, epsilon);
}
