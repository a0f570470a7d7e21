// Records of a job's model stage and kernel stage: plain values that the job runner
// gathers from every rank and the results writer turns into HDF5 tables
// (docs/results-schema.md). Reporters turn records into output; nothing here writes.
#pragma once

#include "core/dtype.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace fk::results {

// Time of one step (prefill or a decode step) of one run on one rank.
struct StepTiming {
  std::string run;  // "fp32", "baseline", "selected"
  int64_t iteration = 0;
  std::string step;  // "prefill", "decode.0", ...
  int64_t rank = 0;
  double total_s = 0, compute_s = 0, comm_s = 0;
  // The step replayed a captured device graph: compute_s is the whole graph's device
  // time, comm_s 0, and no op of it has an OpTiming (its ops were timed eagerly in
  // iteration 0).
  bool graph = false;
};

// Peak memory of one run of the model stage on one rank's device (core/tensor.h
// MemoryUse: what the allocator handed to tensors, and what it held from the system,
// cached blocks included), from just before the run's weights were made to its end.
struct MemoryPeak {
  std::string run;  // "fp32", "baseline", "selected"
  int64_t rank = 0;
  std::string device;  // "cuda:0", "cpu"
  int64_t peak_in_use_bytes = 0, peak_reserved_bytes = 0;
};

// Summed time of one op role in one layer (all micro-batches) of one step.
struct OpTiming {
  std::string run;
  int64_t iteration = 0;
  std::string step;
  int64_t rank = 0;
  int64_t layer = -1;
  std::string op, role;
  bool comm = false;
  int64_t calls = 0;
  double seconds = 0;
  double bytes = 0;
};

// Squared error sums of one layer's residual stream in one step of one run (summed
// over the rows traced on one rank); the relative L2 error is sqrt(err / ref).
struct LayerError {
  std::string run;
  std::string step;
  int64_t layer = 0;  // num_hidden_layers stands for the final output of encoders
  double err_vs_fp32 = 0, ref_fp32 = 0;
  double err_vs_baseline = 0, ref_baseline = 0;
  int64_t rows = 0;
};

// Logit agreement of one step of one run (summed over the sequences of one rank).
struct LogitStats {
  std::string run;
  std::string step;
  int64_t sequences = 0;
  int64_t top1_match_fp32 = 0, top1_match_baseline = 0;
  double kl_sum_fp32 = 0, kl_sum_baseline = 0;  // sum over sequences of KL(p_ref || p_run), nats
};

// One op instance replayed by the kernel stage on one rank.
struct KernelInstanceResult {
  std::string op, role, impl;
  std::string shape;        // "tokens=512,hidden=4096"
  std::string params;       // "1e-06"
  DType dtype = DType::kF32;
  int64_t calls_per_step = 0;
  std::vector<int64_t> layers;
  double flops = 0, bytes = 0;
  // Precision against the fp64 reference (worst over rounds and outputs).
  double rel_l2 = 0, max_abs = 0, matched_fraction = 1;
  int64_t nan = 0, inf = 0, rounds = 0;
  bool passed = true;
  double atol = 0, rtol = 0;
  int64_t rank = 0;
  int64_t buffer_sets = 1;
  std::vector<double> seconds;  // every timed iteration
  int64_t throttled = 0;        // timed iterations during which the device reported a slowdown
};

// One op instance of a candidate kernel through the correctness gates (one rank).
struct CandidateInstanceRecord {
  std::string candidate, op, role, shape, params, dtype;
  int64_t rank = 0;
  std::string verdict, reason;
  double rel_l2 = 0, max_abs = 0, matched_fraction = 1, baseline_rel_l2 = 0;
  int64_t nan = 0, inf = 0;
  double candidate_median_s = 0, baseline_median_s = 0, speedup = 0, reuse_ratio = 0;
  std::vector<double> candidate_s, baseline_s;
  // Device candidates (empty / 0 for host ones): the spans the worker reported, the
  // supervisor's clock around each call, and the door, excess, allowance and charge of
  // kernels/candidate/gates.h device_time_bounded.
  std::vector<double> candidate_span_s, candidate_wall_s, baseline_wall_s;
  double door_s = 0, clock_excess_s = 0, clock_allowance_s = 0, clock_charged_s = 0;
};

// A candidate's verdict for the job, with its build and its model-level figures.
struct CandidateSummary {
  std::string name, op, backend, folder;
  std::string verdict, reason;
  bool compiled = false, cached = false;
  bool exercised = false;  // the model called the candidate's op in this job
  double compile_s = 0;
  std::string key, library, command, compile_log;
  double model_rel_err = 0, baseline_rel_err = 0;  // last layer vs fp32 (selected / baseline run); NaN when not run
  double top1 = 0, baseline_top1 = 0;
  double e2e_speedup = 0;     // baseline / selected model-stage time (results/model_time.h)
  double kernel_speedup = 0;  // geometric mean over the candidate's instances
  std::string sandbox;        // the sandbox layers its worker ran under ("seccomp, landlock v7, ...")
};

nlohmann::json to_json(const StepTiming& r);
nlohmann::json to_json(const MemoryPeak& r);
nlohmann::json to_json(const OpTiming& r);
nlohmann::json to_json(const LayerError& r);
nlohmann::json to_json(const LogitStats& r);
nlohmann::json to_json(const KernelInstanceResult& r);
void from_json(const nlohmann::json& j, StepTiming& r);
void from_json(const nlohmann::json& j, MemoryPeak& r);
void from_json(const nlohmann::json& j, OpTiming& r);
void from_json(const nlohmann::json& j, LayerError& r);
void from_json(const nlohmann::json& j, LogitStats& r);
void from_json(const nlohmann::json& j, KernelInstanceResult& r);
nlohmann::json to_json(const CandidateInstanceRecord& r);
void from_json(const nlohmann::json& j, CandidateInstanceRecord& r);

}  // namespace fk::results
