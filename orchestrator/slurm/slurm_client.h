// SlurmClient: the Slurm executor's only way to reach Slurm (the environment seam).
//
// Three calls — submit a batch script, ask what became of some jobs, cancel one — with
// a real implementation over sbatch/squeue/sacct/scancel (slurm_cli_client.h) and a
// scripted fake that injects what clusters do to jobs (fake_slurm_client.h). Calls
// block (they run commands with time limits); the executor makes them from its own
// command thread, one at a time, never on the io_context. Failures are values, not
// exceptions: a cluster that does not answer is an expected condition.
#pragma once

#include "orchestrator/slurm/slurm_state.h"

#include <map>
#include <string>
#include <vector>

namespace fk::orchestrator {

struct SlurmSubmit {
  std::string script_path;  // the rendered batch script, already written (sbatch reads it)
  std::string script;       // its text (for fakes and error messages)
};

struct SlurmSubmitResult {
  std::string job_id;      // set on success
  std::string error;       // set on failure: what sbatch said
  bool transient = false;  // the controller did not answer in time: trying again may work
  bool ok() const { return !job_id.empty(); }
};

// What Slurm says about one job.
struct SlurmJobInfo {
  std::string job_id;
  SlurmState state = SlurmState::kUnknown;
  std::string state_text;  // as printed ("CANCELLED by 0")
  std::string reason;      // why it waits or ended ("None", "PartitionDown"...)
  int exit_code = -1;      // the batch script's exit code; -1 when not known
  int signal = 0;          // the signal that ended it, when one did
  int restarts = 0;        // times Slurm requeued it (SLURM_RESTART_COUNT of the current run)
  std::string source;      // "squeue" or "sacct"
};

struct SlurmQuery {
  std::string error;  // non-empty: Slurm could not be asked (controller down, command failed)
  // The jobs squeue or sacct know, by id. A queried id missing here is unknown to both:
  // purged from the controller (MinJobAge) with no accounting to fall back on.
  std::map<std::string, SlurmJobInfo> jobs;
  // Whether sacct could be asked about jobs squeue no longer lists (false when it is
  // not installed or accounting is disabled): then only the attempt's files can tell.
  bool accounting = true;
  // false: sacct failed this time (not for good); absent ids are no evidence this poll.
  bool complete = true;
  bool ok() const { return error.empty(); }
};

class SlurmClient {
 public:
  virtual ~SlurmClient() = default;
  virtual SlurmSubmitResult submit(const SlurmSubmit& request) = 0;
  // States of `job_ids`: squeue first (it lists jobs until MinJobAge after they end),
  // then sacct for the ids squeue does not list, when sacct works.
  virtual SlurmQuery query(const std::vector<std::string>& job_ids) = 0;
  // scancel; returns "" when the request was accepted, else the error. Cancelling a
  // job that already ended is not an error.
  virtual std::string cancel(const std::string& job_id) = 0;
};

}  // namespace fk::orchestrator
