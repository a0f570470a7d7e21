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
// `mpirun -np RANKS --oversubscribe` ($FK_MPIRUN for mpirun), plus `--bind-to none`
// when `unbound`: Open MPI binds a job of one or two ranks to one core each, and a lone
// rank's host threads (16 on an H200 machine) would share that core.
std::vector<std::string> mpirun_prefix(int ranks, bool unbound);
// The mpirun command line for `o`.
std::vector<std::string> launch_command(const LaunchOptions& o);

}  // namespace fk::orchestrator
