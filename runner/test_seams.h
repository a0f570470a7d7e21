// Test seams of fk-runner: faults that tests inject through environment variables so
// that the campaign tools can be checked on real job files (fk compare must flag a
// slowdown and a precision drop; docs/reports.md). Each variable is read in one place,
// here, once per process; when it is unset (production) every function is a no-op
// apart from one cached getenv.
//
//   FK_RUNNER_SLOWDOWN=F          F > 1: every timed compute region (kernel-stage
//                                 iterations, model-stage op calls, hence step times)
//                                 lasts F times as long: the caller spins before it
//                                 reads the clock. Other values: no effect.
//   FK_RUNNER_PRECISION_NOISE=OP:A[,OP:A...]  the kernel stage's precision rounds
//                                 perturb each named op's float outputs to
//                                 x * (1 + A * u), u uniform in [-1, 1] from a fixed
//                                 stream, before comparing them with the fp64
//                                 reference. Timing is unaffected.
#pragma once

#include "kernels/op.h"

#include <chrono>

namespace fk::runner {

// The FK_RUNNER_SLOWDOWN factor (1 when unset or not a number > 1).
double seam_slowdown();

// With a slowdown factor F > 1, spins until (F - 1) times the time elapsed since
// `start` has passed again; otherwise returns at once.
void seam_stretch(std::chrono::steady_clock::time_point start);

// With FK_RUNNER_PRECISION_NOISE naming def's op, perturbs the defined, contiguous
// float outputs (out and in-out arguments) of `call` in place; otherwise no-op.
void seam_perturb_outputs(const kernels::OpDef& def, const kernels::OpCall& call);

}  // namespace fk::runner
