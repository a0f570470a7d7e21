// Launching fk-runner locally under mpirun (the local executor's transport; fk check
// uses it too). Finds fk-runner next to the fk executable, adds what Open MPI needs
// when run as root, and streams the runner's output.
#pragma once

#include "core/subprocess.h"

#include <functional>
#include <string>
#include <vector>

namespace fk::orchestrator {

struct LaunchOptions {
  int ranks = 1;
  std::string jobs_file;
  std::string results_dir;
  std::vector<std::string> runner_args;  // extra fk-runner arguments
  double timeout_s = 0;
  std::function<void(const std::string&)> on_line;
};

// Path of fk-runner: $FK_RUNNER, else next to this executable (build tree or install),
// else "fk-runner" on PATH.
std::string runner_path();
// The mpirun command line for `o`.
std::vector<std::string> launch_command(const LaunchOptions& o);
SubprocessResult launch_local(const LaunchOptions& o);

}  // namespace fk::orchestrator
