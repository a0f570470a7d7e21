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
  bool quiet = false;
};

// Returns the exit status: 0 when every candidate PASSED everywhere, 1 when some
// verdict is not PASSED, 2 for bad input (messages already printed).
int check_run(const CheckOptions& options);

}  // namespace fk::orchestrator
