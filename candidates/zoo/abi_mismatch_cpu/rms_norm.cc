// Zoo (bad on purpose): built against a different (future) kernel ABI version; the
// loader must refuse it before any call (RUNTIME_ERROR naming both versions).
#include "fk_kernel.h"

extern "C" uint32_t fk_kernel_abi_version(void) { return 99; }

extern "C" int fk_candidate_rms_norm(const fk_context*, fk_t, fk_t, fk_t, double) { return FK_OK; }
