// Batch scripts from templates (slurm/templates/*.sbatch).
//
// A template is a bash script with {{name}} placeholders. Names ending in `_sh` are
// replaced by one shell word (quoted when needed) for use in commands; the others by
// raw text for #SBATCH lines, which must not span lines (sbatch_directives alone may
// hold several). An unknown name, an unterminated {{, or a value that breaks its line
// is an error naming the template — caught when the executor starts, not at the first
// submission. docs/slurm.md lists every placeholder.
#pragma once

#include "core/spec/campaign.h"
#include "orchestrator/executor.h"

#include <map>
#include <string>
#include <vector>

namespace fk::orchestrator {

// The placeholder values of one attempt (everything the template may use).
struct SlurmScriptValues {
  std::map<std::string, std::string> values;
};

// What goes into the script besides the LaunchRequest.
struct SlurmScriptSettings {
  spec::SlurmSpec slurm;  // partition, account, qos, nodes, gpus, extra sbatch args
  std::string runner;     // fk-runner path (on the compute nodes)
  std::string srun = "srun";
  std::string mpi = "pmix";            // srun --mpi=<mpi>; "" = Slurm's MpiDefault
  std::vector<std::string> srun_args;  // more srun arguments
  bool requeue = true;                 // #SBATCH --requeue (Slurm reruns it after a node failure)
};

// Shell word for `text`: as is when it is made of safe characters, else single-quoted.
std::string shell_quote(const std::string& text);
// Slurm --time for a limit in seconds: whole minutes, rounded up, at least one ("H:MM:00");
// "UNLIMITED" for a limit <= 0.
std::string slurm_time_limit(double seconds);
// A Slurm job name for an attempt ("fk-" + id, characters outside [A-Za-z0-9._-] -> '_').
std::string slurm_job_name(const std::string& attempt_id);

// The fk-runner command line of an attempt (runner, --jobs, --results, --only, --attempt,
// --heartbeat, runner_args), as the local executor builds it.
std::vector<std::string> slurm_runner_command(const LaunchRequest& request, const std::string& runner);
SlurmScriptValues slurm_script_values(const LaunchRequest& request, const SlurmScriptSettings& settings,
                                      const std::string& attempt_dir);

// Every placeholder a template may use.
const std::vector<std::string>& slurm_template_placeholders();
// Checks a template (throws fk::Error naming `name` and the line on a problem).
void slurm_template_check(const std::string& text, const std::string& name);
// Replaces the placeholders (throws fk::Error as above, or when a value is missing).
std::string slurm_template_render(const std::string& text, const std::string& name, const SlurmScriptValues& values);

// The default template: $FK_SLURM_TEMPLATES/attempt.sbatch, else the source tree's
// slurm/templates/attempt.sbatch.
std::string slurm_default_template();

}  // namespace fk::orchestrator
