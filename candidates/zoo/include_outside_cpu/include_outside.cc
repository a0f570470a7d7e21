// Test zoo — include_outside (CPU, hostile): includes /etc/shadow, hoping the
// compiler's error message stores the file's first line in the results. The compiler
// runs in the sandbox, which reads only system folders, the include folder and the
// candidate's own. Expected verdict: COMPILE_ERROR, reason "Permission denied", and no
// line of the file in the compile log.
#include "fk_kernel.h"
#include "/etc/shadow"

FK_KERNEL_DEFINE_ABI_VERSION()

extern "C" int fk_candidate_rms_norm(const fk_context*, fk_t, fk_t, fk_t, double) { return FK_OK; }
