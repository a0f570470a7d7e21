// SlurmClient over Slurm's commands: sbatch --parsable, squeue -O, sacct --parsable2,
// scancel. Every command runs through core/subprocess.h with a time limit, so a hung
// controller turns into an error value, never a hang. Commands run through a
// CommandRunner (subprocess_run by default) so tests can feed it Slurm's real output,
// errors included, without a cluster.
//
// sacct is optional: when it is not installed, or answers that accounting is disabled
// or that it cannot reach slurmdbd, the client says so (SlurmQuery::accounting = false)
// and asks again only after `sacct_recheck_s`.
#pragma once

#include "core/subprocess.h"
#include "orchestrator/slurm/slurm_client.h"

#include <functional>
#include <mutex>

namespace fk::orchestrator {

struct SlurmCliOptions {
  std::string sbatch = "sbatch", squeue = "squeue", sacct = "sacct", scancel = "scancel";
  double submit_timeout_s = 60;
  double query_timeout_s = 30;
  double cancel_timeout_s = 30;
  double sacct_recheck_s = 600;
};

using SlurmCommandRunner = std::function<SubprocessResult(const std::vector<std::string>&, const SubprocessOptions&)>;

class SlurmCliClient final : public SlurmClient {
 public:
  explicit SlurmCliClient(SlurmCliOptions options = {}, SlurmCommandRunner runner = {});
  SlurmSubmitResult submit(const SlurmSubmit& request) override;
  SlurmQuery query(const std::vector<std::string>& job_ids) override;
  std::string cancel(const std::string& job_id) override;

 private:
  SubprocessResult run(const std::vector<std::string>& argv, double timeout_s) const;

  SlurmCliOptions o_;
  SlurmCommandRunner runner_;
  std::mutex mutex_;
  bool sacct_ok_ = true;
  double sacct_failed_at_ = 0;  // steady seconds
  std::string sacct_error_;
};

// The squeue format the client asks for, and parsers of what the commands print
// (exposed for tests). squeue's exit_code column is a wait status (768 = exit 3;
// 15 = SIGTERM); sacct's ExitCode is "exit:signal".
extern const char* const kSlurmSqueueFormat;
std::map<std::string, SlurmJobInfo> slurm_parse_squeue(const std::string& output);
std::map<std::string, SlurmJobInfo> slurm_parse_sacct(const std::string& output);
// "123" or "123;cluster" -> "123"; anything else -> "".
std::string slurm_parse_sbatch(const std::string& output);
// Whether sacct's complaint means "no accounting here" (rather than a passing failure).
bool slurm_sacct_unavailable(const std::string& output);

}  // namespace fk::orchestrator
