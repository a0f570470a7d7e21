// The command line that runs fk-runner locally under mpirun (the local executor's
// transport, which fk run and fk check use): finds fk-runner next to the fk executable.
// Processes are started and supervised by the local executor (local_executor.h).
#pragma once

#include <string>
#include <vector>

namespace fk::orchestrator {

struct LaunchOptions {
  int ranks = 1;
  std::string jobs_file;
  std::string results_dir;
  std::vector<std::string> runner_args;  // extra fk-runner arguments
  bool unbound = false;  // mpirun --bind-to none (see LaunchRequest::unbound)
};

// Path of fk-runner: $FK_RUNNER, else next to this executable (build tree or install),
// else "fk-runner" on PATH.
std::string runner_path();
// The mpirun command line for `o`.
std::vector<std::string> launch_command(const LaunchOptions& o);

}  // namespace fk::orchestrator
