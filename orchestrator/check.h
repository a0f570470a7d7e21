// `fk check`: one command a kernel author runs in a loop. For the given candidate
// folders it writes a small campaign (the architectures, layouts and workloads asked
// for, one candidate set per candidate), plans it, runs it with fk-runner under a
// local mpirun (build, kernel-level gates at every shape, model stage with the
// candidate swapped in), reads the job files and prints one table of verdicts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fk::orchestrator {

struct CheckOptions {
  std::vector<std::string> candidates;  // candidate folders
  std::vector<std::string> archs;       // names in <specs>/architectures or paths
  std::vector<std::string> layouts;     // "tp1", "tp2pp1", ...
  std::vector<std::string> workloads;   // names/paths; empty: a built-in prefill and decode workload
  std::string dtype;                    // override the workloads' dtype ("" = the architecture's)
  std::string scale = "tiny";
  std::string specs_dir;                // default: the specs folder of this source tree
  std::string results_dir;              // default: ./fk-check/<first candidate>
  uint64_t seed = 1;
  int64_t rounds = 3, warmup = 3, iterations = 20;
  double instance_time_limit_s = 60;
  double heartbeat_timeout_s = 0;       // 0: the campaign default (executor.heartbeat_timeout)
  bool quiet = false;
};

// fk-runner is supervised as fk run supervises an attempt (orchestrator/supervise.h):
// the sum of the jobs' time limits, the heartbeat timeout, SIGINT/SIGTERM stop it.
// The table shows every job that finished, also when a later one failed or hung.
// Returns the exit status: 0 when every candidate PASSED everywhere, 1 when some
// verdict is not PASSED or some job did not finish, 2 for bad input (messages already
// printed), 130/143 after SIGINT/SIGTERM.
int check_run(const CheckOptions& options);

}  // namespace fk::orchestrator
