#include "orchestrator/launch.h"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace fk::orchestrator {
namespace fs = std::filesystem;

std::string runner_path() {
  if (const char* env = std::getenv("FK_RUNNER"); env && *env) return env;
  char buf[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    const fs::path dir = fs::path(std::string(buf, static_cast<size_t>(n))).parent_path();
    for (const auto& p : {dir / "fk-runner", dir.parent_path() / "runner" / "fk-runner"})
      if (fs::exists(p)) return p.string();
  }
  return "fk-runner";
}

std::vector<std::string> launch_command(const LaunchOptions& o) {
  const char* mpirun = std::getenv("FK_MPIRUN");
  std::vector<std::string> cmd = {mpirun && *mpirun ? mpirun : "mpirun", "-np", std::to_string(o.ranks),
                                  "--oversubscribe"};
  // Open MPI binds a job of one or two ranks to one core each: a lone rank's host
  // threads (16 on an H200 machine) would share that core.
  if (o.unbound) cmd.insert(cmd.end(), {"--bind-to", "none"});
  cmd.push_back(runner_path());
  cmd.insert(cmd.end(), {"--jobs", o.jobs_file, "--results", o.results_dir});
  cmd.insert(cmd.end(), o.runner_args.begin(), o.runner_args.end());
  return cmd;
}

}  // namespace fk::orchestrator
