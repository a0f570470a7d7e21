// Checking a candidate's op instances: the gates (kernels/candidate/gates.h) run here,
// in fk-runner; the candidate runs in a sandboxed worker and the baseline in another
// (kernels/candidate/worker.h), so fk-runner never maps candidate code.
//
// Every instance ends with an explicit verdict: PASSED only from gates that all ran;
// a worker that dies, exits or hangs gives its instance CRASHED / TIMEOUT /
// REWARD_HACK (a forbidden system call) with the cause, a fresh worker continues with
// the next instance, and after three such ends the rest are CRASHED "not run".
// Under compute-sanitizer (CandidateCheckOptions::sanitizer) the findings its log
// holds after an instance's gates join that instance's verdict.
#pragma once

#include "kernels/candidate/gates.h"
#include "kernels/candidate/manifest.h"
#include "runner/runtime.h"

#include <string>
#include <vector>

namespace fk::runner {

struct CandidateInstanceResult {
  InstanceRecord instance;
  kernels::VerdictReason verdict{kernels::Verdict::kRuntimeError, "not checked"};
  double rel_l2 = 0, max_abs = 0, matched_fraction = 1, baseline_rel_l2 = 0;
  int64_t nan = 0, inf = 0;
  double candidate_median_s = 0, baseline_median_s = 0, speedup = 0, reuse_ratio = 0;
  std::vector<double> candidate_s, baseline_s;
  // Device candidates: how the charged times came about (kernels/candidate/gates.h).
  std::vector<double> candidate_span_s, candidate_wall_s, baseline_wall_s;
  double door_s = 0, clock_excess_s = 0, clock_allowance_s = 0, clock_charged_s = 0;
};

struct CandidateCheckOptions {
  std::string worker;              // path of fk-candidate-worker
  double instance_time_limit_s = 60;
  int threads = 1;
  kernels::GateOptions gate;
  std::vector<bool> timed;         // per instance: time it (empty: all); others are checked only
  // The supervisor's backend of a device candidate's device (the workers' arenas and
  // the cache flush are on it); nullptr for a CPU candidate.
  kernels::Backend* device = nullptr;
  // compute-sanitizer's path: the candidate's worker runs under it with `sanitizer_tool`
  // (kernels/candidate/sanitizer.h). Its findings join each instance's verdict; nothing
  // is timed, the idle-CPU test is off and the candidate's time limit is 10x.
  std::string sanitizer, sanitizer_tool = "memcheck";
};

struct CandidateCheck {
  std::vector<CandidateInstanceResult> results;
  std::string sandbox;  // the sandbox layers the worker reported
};

// Checks `instances` (all of the candidate's op) with the library at `library`.
CandidateCheck candidate_check(const kernels::CandidateManifest& manifest, const std::string& library,
                               const std::vector<InstanceRecord>& instances, const CandidateCheckOptions& options);

}  // namespace fk::runner
