// The correctness gates and cheat checks one op instance goes through when a
// candidate replaces the baseline (docs/writing-kernels.md lists them for authors).
//
// Every round draws fresh inputs; the candidate's buffers sit inside guard regions,
// its outputs are poisoned before the call; after it returns:
//   guards intact (else INCORRECT_SHAPE), inputs unchanged (else REWARD_HACK),
//   outputs fully written, finite where the reference is, not all zeros/constant,
//   within the op's per-dtype tolerance (99% inside), and no less accurate than
//   `accuracy_bound` x the baseline's error on the same inputs (else INCORRECT_NUMERICAL);
//   the outputs do not change after return (work left running) and differ from the
//   previous round's when the inputs do (cached results) (else REWARD_HACK).
// Then the candidate and the baseline are timed side by side on rotated input sets,
// and the candidate once more on one reused set: a candidate that gets much faster
// only when its buffers are reused is a REWARD_HACK.
#pragma once

#include "kernels/candidate/verdict.h"
#include "kernels/op.h"

#include <string>
#include <vector>

namespace fk::kernels {

struct GateOptions {
  int64_t rounds = 3;
  int64_t warmup = 3;
  int64_t iterations = 20;
  uint64_t seed = 0;
  size_t flush_bytes = size_t{16} << 20;
  double after_return_wait_s = 0.1;  // how long outputs must stay unchanged after return
  double accuracy_bound = 4.0;       // candidate rel L2 may be at most this x the baseline's
  size_t guard_bytes = 256;
  bool timing = true;
};

struct InstanceGate {
  VerdictReason verdict;
  double rel_l2 = 0, max_abs = 0, matched_fraction = 1;
  int64_t nan = 0, inf = 0;
  double baseline_rel_l2 = 0;
  std::vector<double> candidate_s, baseline_s;
  double candidate_median_s = 0, baseline_median_s = 0, speedup = 0;
  double reuse_ratio = 0;  // candidate median with one reused set / with rotated sets
};

// `stream` names the RNG stream of this instance (inputs depend on it and the seed).
InstanceGate gate_instance(const OpDef& def, const OpImpl& candidate, const OpImpl& baseline, const OpShape& shape,
                           DType dtype, const GateOptions& options, const std::string& stream);

}  // namespace fk::kernels
