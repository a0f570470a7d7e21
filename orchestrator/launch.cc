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

std::vector<std::string> mpirun_prefix(int ranks, bool unbound) {
  const char* mpirun = std::getenv("FK_MPIRUN");
  std::vector<std::string> cmd = {mpirun && *mpirun ? mpirun : "mpirun", "-np", std::to_string(ranks),
                                  "--oversubscribe"};
  if (unbound) cmd.insert(cmd.end(), {"--bind-to", "none"});
  return cmd;
}

std::vector<std::string> launch_command(const LaunchOptions& o) {
  std::vector<std::string> cmd = mpirun_prefix(o.ranks, o.unbound);
  cmd.push_back(runner_path());
  cmd.insert(cmd.end(), {"--jobs", o.jobs_file, "--results", o.results_dir});
  cmd.insert(cmd.end(), o.runner_args.begin(), o.runner_args.end());
  return cmd;
}

}  // namespace fk::orchestrator
