// The correctness gates and cheat checks one op instance goes through when a
// candidate replaces the baseline (docs/writing-kernels.md lists them for authors).
//
// The gates run in the supervisor; the candidate and the baseline run in sandboxed
// workers (kernels/candidate/worker.h) on tensors in their arenas, which the gates
// prepare and read back themselves. Nothing the candidate's process says is believed
// except "I returned" and its status code; every figure is measured here.
//
// Even rounds draw fresh inputs in new buffers; odd rounds write new inputs in place
// into the previous round's buffers (a cache keyed on addresses then shows). The
// candidate's buffers sit inside guard regions, its outputs are poisoned before a
// fresh round; after it returns:
//   guards intact (else INCORRECT_SHAPE), inputs unchanged (else REWARD_HACK),
//   outputs fully written, finite where the reference is, not all zeros/constant,
//   within the op's per-dtype tolerance (99% inside), and no less accurate than
//   `accuracy_bound` x the baseline's error on the same inputs (else INCORRECT_NUMERICAL);
//   the outputs do not change after return (work left running) and differ from the
//   previous round's when the inputs do (cached results) (else REWARD_HACK).
// In round 0 the worker must also stay idle (no CPU time) while the gate waits.
// Then the candidate and the baseline are timed interleaved (A B, B A, ...) by the
// measurement driver (kernels/measure.h) on rotated input sets whose values change
// before every call, with the supervisor's cache flush before each; every timed output
// is checked again (fully written, within tolerance of the baseline's output on the
// same inputs), and the worker's CPU time over the loop must fit the time it was
// given. Last, both run on one reused set; the ratio is recorded (reuse_ratio), not
// judged: timing alone cannot tell 0.2 us from 2 us. The instance is PASSED only when
// every one of these steps ran and said so.
//
// Host workers (CPU candidates) are timed by the supervisor's clock, request to reply.
// Device workers (CUDA candidates) run in arenas of device memory that the supervisor
// writes and reads through its own backend: guards, poison, inputs and outputs are all
// in device memory. Their calls are timed by the span of device work the worker's
// tracer saw (CUPTI: every kernel, copy and memset, on any stream), bounded below by
// the supervisor's clock (device_time_bounded); the flush is the supervisor's own L2
// flush, finished before the call. Every candidate reply must also pass the all-streams
// gate: device work outside ctx->stream, still running after it, or started after the
// previous call returned is REWARD_HACK, and so is a device left with a persisting-L2
// carve-out (the worker's audit after each call); a device fault is CRASHED with the
// CUDA error.
#pragma once

#include "kernels/candidate/verdict.h"
#include "kernels/candidate/worker.h"
#include "kernels/op.h"

#include <string>
#include <vector>

namespace fk::kernels {

struct GateOptions {
  int64_t rounds = 3;
  int64_t warmup = 3;
  int64_t iterations = 20;
  uint64_t seed = 0;
  size_t flush_bytes = size_t{16} << 20;  // host workers: the CPU backend's flush (device: the device's)
  double after_return_wait_s = 0.1;  // how long outputs must stay unchanged after return
  double accuracy_bound = 4.0;       // candidate rel L2 may be at most this x the baseline's
  size_t guard_bytes = 256;
  bool timing = true;
  // The worker must use no CPU while the gate waits after round 0's return. Off under a
  // sanitizer, whose own threads run in the worker's process.
  bool idle_cpu_check = true;
  int threads = 1;  // threads the candidate was given (bounds its CPU time)
};

struct InstanceGate {
  VerdictReason verdict;
  double rel_l2 = 0, max_abs = 0, matched_fraction = 1;
  int64_t nan = 0, inf = 0;
  double baseline_rel_l2 = 0;
  std::vector<double> candidate_s, baseline_s;
  double candidate_median_s = 0, baseline_median_s = 0, speedup = 0;
  double reuse_ratio = 0;  // candidate median with one reused set / with rotated sets
  // Device workers: the per-call figures the charged times came from (timed rounds):
  // the spans the worker reported, the supervisor's clock around each candidate and
  // baseline call, and how device_time_bounded weighed them (ChargedTimes below).
  std::vector<double> candidate_span_s, candidate_wall_s, baseline_wall_s;
  double door_s = 0, clock_excess_s = 0, clock_allowance_s = 0, clock_charged_s = 0;
  bool candidate_ended = false;  // the candidate's worker died or hung: start a new one
  bool baseline_ended = false;   // the baseline's worker died (a bug of ours, not the candidate's)
  // > 0: a worker's arena is too small for this instance (RUNTIME_ERROR saying so);
  // workers with arenas of this many bytes can check it.
  size_t arena_bytes_needed = 0;
};

// A device candidate's charged times. A device worker reports each call's traced span
// itself, and candidate code in its process could forge it; the supervisor's clock
// (request to reply) holds the span plus the door (waking the worker, launching,
// waiting for the device, the trace). The door is measured on the baseline's worker,
// which runs only our code and goes through the same steps: door = median(baseline
// wall - baseline span). The candidate's excess is median(its wall - its span) - door:
// about 0 for honest spans, and what was hidden for forged ones. The door jitters by
// microseconds from call to call, so the test is on medians, not per call (a per-call
// max(span, wall - door) charges honest kernels the jitter): an excess above the
// allowance, max(10% of the median span, 1 us, 3 standard errors of the excess), is
// added to every call's span, and the times are the spans otherwise. A forger gains
// at most the allowance; the figures are recorded with every instance.
struct ChargedTimes {
  std::vector<double> seconds;  // per candidate call
  double door_s = 0;
  double excess_s = 0;          // median(candidate wall - span) - door
  double allowance_s = 0;
  double charged_s = 0;         // added to every call: excess_s when above allowance_s, else 0
};
ChargedTimes device_time_bounded(const std::vector<double>& span, const std::vector<double>& wall,
                                 const std::vector<double>& base_span, const std::vector<double>& base_wall);

// A charge stands only when a second timing loop of the same instance charges too. The
// door's jitter has heavier tails than its standard error says: on the H200 one honest
// instance in 84 went just over its allowance (110 us over 105 us), while a forged
// span is over in every loop. Returns `first` when it charges nothing; else the first
// loop's times with the smaller of the two charges (0 when `second` charges nothing)
// and the figures of the loop that decided.
ChargedTimes confirmed_charge(const ChargedTimes& first, const ChargedTimes& second);

// `stream` names the RNG stream of this instance (inputs depend on it and the seed).
// Both workers must be alive and loaded.
InstanceGate gate_instance(const OpDef& def, Worker& candidate, Worker& baseline, const OpShape& shape, DType dtype,
                           const GateOptions& options, const std::string& stream);

}  // namespace fk::kernels
