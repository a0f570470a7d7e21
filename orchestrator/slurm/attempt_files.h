// The files a Slurm attempt leaves in its attempt folder: the contract between the
// batch script template (slurm/templates/attempt.sbatch) and the executor.
//
//   job.sbatch  the rendered script that was submitted
//   started     one line per run of the script: "<job id> <restart count> <host> <epoch s>"
//               (a requeued job appends a line each time Slurm starts it again)
//   exit_code   written (atomically, via exit_code.tmp) when fk-runner's srun returns:
//               "<exit code> <restart count> <job id> <1 if the script got SIGTERM else 0>"
//               A new run deletes a stale one first.
//   ranks/rank.<SLURM_PROCID>
//               an empty file each rank creates just before it execs fk-runner. srun
//               returns 0 when a step fails to launch on a node (Slurm 22.05 with
//               PMIx: "task 0 launch failed: Unspecified error"), so the script counts
//               these after srun: exit 0 with fewer than ntasks of them becomes
//               kSlurmStepNotLaunchedExit, which the executor reports as a node
//               failure (retried), never as success.
//
// They let the executor know how an attempt ended when Slurm itself no longer can:
// squeue forgets a job MinJobAge after it ends, and sacct needs an accounting database
// that many clusters (and the test cluster) do not have.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fk::orchestrator {

// The script's exit code when srun returned 0 but not every rank started. Neither
// fk-runner (0-6), a shell (126, 127) nor a signal (128 + 1..64) gives it.
inline constexpr int kSlurmStepNotLaunchedExit = 199;

struct AttemptFiles {
  std::string dir;
  std::string script() const { return dir + "/job.sbatch"; }
  std::string started() const { return dir + "/started"; }
  std::string exit_code() const { return dir + "/exit_code"; }
  std::string ranks() const { return dir + "/ranks"; }
};

struct ExitRecord {
  int exit_code = -1;
  int restarts = 0;
  std::string job_id;
  bool terminated = false;  // the script was sent SIGTERM (scancel, time limit, requeue)
};

struct StartRecord {  // the last line of `started`
  std::string job_id;
  int restarts = 0;
  std::string host;
  double epoch_s = 0;
  int runs = 0;  // lines in the file
};

std::optional<ExitRecord> exit_record_parse(std::string_view text);
std::optional<StartRecord> start_record_parse(std::string_view text);
// Read from the attempt folder; nullopt when the file is missing or malformed.
std::optional<ExitRecord> exit_record_read(const AttemptFiles& files);
std::optional<StartRecord> start_record_read(const AttemptFiles& files);
// The line the batch script writes (for fakes and tests).
std::string exit_record_format(const ExitRecord& record);

}  // namespace fk::orchestrator
