// The model-stage time of a run and the end-to-end speedup, defined once
// (docs/results-schema.md, "Definitions of the figures"). The runner computes the
// candidates' e2e_speedup with these functions (runner/candidate_stage.cc), and the
// campaign tools compute summary/jobs' model times and e2e_speedup, and so the score,
// with the same functions on the same records read back from the job file
// (results/campaign/job_digest.cc): the two figures cannot disagree.
//
// Model-stage time of a run ("baseline", "selected", "fp32"): for each iteration, the
// sum over the steps (prefill, decode.0, ...) of the slowest rank's step time
// (total_s), the time one whole forward takes; then the median over iterations
// (core/stats.h). Pure functions of the StepTiming records (results/records.h).
#pragma once

#include "results/records.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace fk::results {

// Per-iteration times of one run, one entry per iteration that has records, in
// iteration order.
struct ModelTimeIterations {
  std::vector<int64_t> iteration;
  std::vector<double> model_s;      // sum over steps of the max over ranks of total_s
  std::vector<double> mean_rank_s;  // sum over steps of the mean over ranks of total_s
  std::vector<double> compute_s;    // sum over steps of the mean over ranks of compute_s
  std::vector<double> comm_s;       // sum over steps of the mean over ranks of comm_s
};

// The per-iteration times of `run` from `steps` (records of other runs are skipped).
// Empty when `run` has no records.
ModelTimeIterations model_time_iterations(std::span<const StepTiming> steps, std::string_view run);

// The model-stage time of `run`: the median over iterations of
// model_time_iterations(steps, run).model_s. NaN when `run` has no records.
double model_time(std::span<const StepTiming> steps, std::string_view run);

// The end-to-end speedup: baseline_s / selected_s. NaN unless selected_s > 0 (so NaN
// without a selected run, whose model_time is NaN).
double model_time_speedup(double baseline_s, double selected_s);

// model_time_speedup(model_time(steps, "baseline"), model_time(steps, "selected")).
double model_time_speedup(std::span<const StepTiming> steps);

}  // namespace fk::results
