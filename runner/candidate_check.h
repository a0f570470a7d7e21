// Running a candidate's correctness gates out of process.
//
// The gates run in `fk-candidate-worker`, a child process that loads the candidate's
// library, so a candidate that crashes or hangs cannot take the runner (or the MPI job)
// down. The worker prints "BEGIN <i>" before instance i and one JSON line after it;
// when it dies, the instance it was on gets CRASHED (with the signal) or TIMEOUT
// (per-instance inactivity limit), and a fresh worker continues with the next one.
#pragma once

#include "kernels/candidate/gates.h"
#include "kernels/candidate/manifest.h"
#include "runner/runtime.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fk::runner {

struct CandidateInstanceResult {
  InstanceRecord instance;
  kernels::VerdictReason verdict;
  double rel_l2 = 0, max_abs = 0, matched_fraction = 1, baseline_rel_l2 = 0;
  int64_t nan = 0, inf = 0;
  double candidate_median_s = 0, baseline_median_s = 0, speedup = 0, reuse_ratio = 0;
  std::vector<double> candidate_s, baseline_s;
};

struct CandidateCheckOptions {
  std::string worker;              // path of fk-candidate-worker
  double instance_time_limit_s = 60;
  int threads = 1;
  kernels::GateOptions gate;
};

// Checks `instances` (all of the candidate's op) with the library at `library`.
std::vector<CandidateInstanceResult> candidate_check(const kernels::CandidateManifest& manifest,
                                                     const std::string& library,
                                                     const std::vector<InstanceRecord>& instances,
                                                     const CandidateCheckOptions& options);

// The worker's side: reads the request from `in`, writes progress and results to stdout.
int candidate_worker_main(const std::string& request_json);

// fk-candidate-worker next to the running executable.
std::string candidate_worker_path();

nlohmann::json to_json(const CandidateInstanceResult& r);
CandidateInstanceResult candidate_result_from_json(const nlohmann::json& j);

}  // namespace fk::runner
