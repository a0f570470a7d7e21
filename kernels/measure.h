// The measurement driver (the role of nccl-tests' common.cu): the one place that times
// kernels. The kernel stage and the candidate gates describe what to time as Subjects;
// the driver owns warm-up, rotation over input sets, cache flushes, interleaving, the
// timer, device-state sampling and the summary.
//
// For every timed call of every subject, in this order:
//   prepare(set)   untimed: restore in-place arguments, rewrite inputs
//   flush          untimed: backend.flush_cache(), when the plan says the rotation
//                  alone does not push a set out of the cache before its next use
//   start mark, run(set), stop mark   the timed window (marks on the backend's stream;
//                  with MeasureOptions::tracer, inside a tracer window too)
//   seconds        waits for the stop mark (a `timed` subject: what timed(set) returned)
//   audit          backend.audit(): the device must still be as the judge set it
//   check(set)     untimed: the caller's per-call checks (e.g. the outputs)
// Subjects are interleaved round by round (A B, then B A, ...), so drift in clocks or
// temperature falls on all of them alike; each round uses the next input set.
// Sampling goes on until every subject has `iterations` samples and, when a time
// budget is given, while the budget lasts, up to max_iterations.
#pragma once

#include "core/stats.h"
#include "kernels/backend.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace fk::kernels {

struct MeasureOptions {
  int64_t warmup = 3;          // untimed rounds before sampling
  int64_t iterations = 20;     // minimum samples per subject
  int64_t max_iterations = 0;  // with budget_s > 0: at most this many (0: 10 x iterations)
  double budget_s = 0;         // > 0: keep sampling while the loop has run less than this
  int64_t state_every = 8;     // device state read every this many rounds (and first and last)
  // Optional: after every subject's call of a round (warm-up rounds too), e.g. to hold
  // one subject's outputs against another's on the same inputs.
  std::function<void(int64_t set)> after_round;
  // Optional: the backend's tracer (Backend::tracer()), for benchmarks that split a
  // call's time. Each timed call of a `run` subject is then traced too: begin() after
  // the flush and before the start mark (it waits for the device, so every call starts
  // on an idle device), end() after the stop mark. Measurement::device_span gets the
  // span of the call's device work: the timed window less what the device waited for
  // the host (launch overhead, host work between launches). The judge does not use it.
  DeviceTracer* tracer = nullptr;
};

// A subject gives `run` (timed here, by the backend's timer) or `timed`: a call timed
// elsewhere that returns its own seconds — a call into another process (the candidate
// worker), timed there and bounded by the supervisor's clock (kernels/candidate/gates.h).
// For a `timed` subject the flush is waited for before the call, since the call is not
// ordered after it on the backend's stream.
struct Subject {
  std::string name;
  std::function<void(int64_t set)> prepare;   // optional
  std::function<void(int64_t set)> run;       // run or timed
  std::function<double(int64_t set)> timed;
  std::function<void(int64_t set)> check;     // optional
};

struct Measurement {
  std::string name;
  std::vector<double> seconds;      // every timed call, in order
  std::vector<uint8_t> throttled;   // 1 where the device reported a power/thermal slowdown around the call
  int64_t throttled_count = 0;
  stats::Summary summary;           // of `seconds`
  // With MeasureOptions::tracer: per timed call, first start to last end of its device
  // work (0 where it ran none), and their summary.
  std::vector<double> device_span;
  std::vector<double> device_busy;         // DeviceWork::busy_s of each traced call (gaps between launches left out)
  std::vector<int64_t> device_activities;  // kernels, copies and memsets of each traced call
  std::vector<std::string> device_names;   // DeviceWork::names of the first traced call
  stats::Summary span_summary;
  stats::Summary busy_summary;  // of device_busy
};

struct MeasureResult {
  std::vector<Measurement> subjects;  // in the order given
  DeviceState before, after;          // device state around the loop
  std::string audit;                  // the first audit problem seen ("" when none)
  int64_t sets = 1;
  bool flushed = false;
  double wall_s = 0;
};

// How many input sets of `set_bytes` each to rotate over, and whether to flush too:
// enough sets that the other sets' traffic between two uses of one set is at least
// twice the backend's cache ((sets - 1) x set_bytes >= 2 x cache), at most `max_sets`
// and at most `max_rotation_bytes` in all; when that is not enough, flush before every
// call.
struct RotationPlan {
  int64_t sets = 1;
  bool flush = false;
};
RotationPlan rotation_plan(const Backend& backend, double set_bytes, double max_rotation_bytes, int64_t max_sets = 16);

// Runs the loop described above. Throws what a subject throws (the loop stops there).
MeasureResult measure(Backend& backend, std::span<const Subject> subjects, const RotationPlan& plan,
                      const MeasureOptions& options);

}  // namespace fk::kernels
