// Synthetic job results for tests and benchmarks of the campaign tools: a JobResult
// shaped like fk-runner's (kernel instances with per-rank timing samples, model-stage
// steps, ops, layer errors, logits, optional candidates) from a few knobs, so tests
// can inject exactly the slowdown, noise, precision loss or verdict they need.
// Deterministic: the same spec gives the same records. Not used by fk itself.
#pragma once

#include "results/job_result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fk::results {

struct SyntheticJobSpec {
  std::string id = "000000000000";
  std::string campaign = "synthetic";
  std::string architecture = "llama-3.1-8b", model_type = "llama", family = "llama";
  std::string workload = "small";
  int64_t tp = 1, pp = 1, dp = 1;
  std::string candidate_set = "baseline";
  std::vector<std::string> candidate_verdicts;  // one candidate per entry, ops from the list below
  double e2e_speedup = 1.25;                    // of every candidate (the selected run is faster by it)
  int64_t instances = 12;                       // kernel-stage op instances
  int64_t iterations = 20;                      // timed iterations per instance and rank
  int64_t model_iterations = 3;
  int64_t layers = 4, decode_steps = 2;
  double time_scale = 1.0;    // multiplies every timing
  double noise = 0.05;        // sigma of the log-normal factor on every timing sample
  uint64_t seed = 1;          // of that noise
  double rel_l2_scale = 1.0;  // multiplies the kernel instances' rel L2
  double layer_err_scale = 1.0;
  std::vector<int64_t> failing_instances;  // instances out of tolerance (passed = false)
  std::string status = "completed";
};

// The ops that synthetic instances and candidates cycle through.
const std::vector<std::string>& synthetic_ops();

JobResult synthetic_job(const SyntheticJobSpec& spec);

}  // namespace fk::results
