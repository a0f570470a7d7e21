// Executors: how the orchestrator gets fk-runner attempts run — the local executor
// (mpirun on this machine), the Slurm executor (sbatch/srun) and a fake executor (tests
// and the scale benchmark). The orchestrator owns policy (what to run, retries,
// quarantine, the journal); an executor only transports attempts and reports how each
// ended. Executors are asynchronous: they run on the orchestrator's Boost.Asio
// io_context and report completion by posting the callback to it; no call blocks.
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fk::orchestrator {

// One attempt at running some jobs: one fk-runner invocation (under mpirun or srun).
struct LaunchRequest {
  std::string attempt_id;            // unique in the campaign: "<job id>.a<n>"
  std::vector<std::string> job_ids;  // the jobs in jobs_file this attempt runs
  std::string jobs_file;             // a job file holding (at least) those jobs
  std::string results_dir;
  int ranks = 1;                     // MPI ranks the attempt needs
  double time_limit_s = 600;         // wall-clock limit of the attempt
  std::string heartbeat;             // "host:port" fk-runner reports progress to ("" = none)
  double heartbeat_interval_s = 0;   // fk-runner's --heartbeat-interval (0 = its default)
  std::vector<std::string> runner_args;  // extra fk-runner arguments (--only, --quarantine...)
  std::string log_file;              // where the attempt's stdout/stderr go
  // No CPU binding for the ranks (jobs on a device, whose host threads draw inputs and
  // run fp64 references). CPU jobs keep the launcher's binding: the judge times their
  // sandboxed workers on the host clock, which stays steady when the rank's processes
  // share its cores (unbound on 2 busy cores, a tiny op's ratio ranged 0.02x-76x).
  bool unbound = false;
};

enum class AttemptEnd {
  kSucceeded,    // fk-runner exited 0
  kFailed,       // non-zero exit (exit_code says why: 2 input, 3 job error, 4 crash, 5 results, 6 I/O)
  kTimedOut,     // the executor's limit (or Slurm's TIMEOUT) ended it
  kCancelled,    // cancel() or the scheduler cancelled it
  kNodeFailure,  // the node went away (Slurm NODE_FAIL, lost allocation)
  kLost,         // the executor lost track of it (cannot tell how it ended)
};
std::string_view attempt_end_name(AttemptEnd e);

struct AttemptResult {
  std::string attempt_id;
  AttemptEnd end = AttemptEnd::kLost;
  int exit_code = -1;
  int signal = 0;
  std::string native_id;  // pid, or the Slurm job id
  std::string reason;     // one line for humans (pending reason, signal, sacct state...)
  double seconds = 0;
};

class Executor {
 public:
  using Done = std::function<void(const AttemptResult&)>;
  virtual ~Executor() = default;

  virtual std::string name() const = 0;  // "local", "slurm", "fake"
  // Ranks this executor may run at once (packing limit); 0 = no limit of its own.
  virtual int capacity() const = 0;
  // Starts an attempt. `done` is posted to the io_context exactly once when it ends.
  virtual void launch(const LaunchRequest& request, Done done) = 0;
  // Asks an attempt to stop (SIGTERM / scancel); its `done` still fires (kCancelled).
  virtual void cancel(const std::string& attempt_id) = 0;
  // Native ids of attempts still running (for the journal: resume kills or re-attaches).
  virtual std::vector<std::pair<std::string, std::string>> running() const = 0;
  // The native id of one running attempt ("" when unknown).
  virtual std::string native_id(const std::string& attempt_id) const {
    for (const auto& [a, n] : running())
      if (a == attempt_id) return n;
    return "";
  }
  // Whether attempts report heartbeats (fk-runner does; a simulation does not): the
  // orchestrator stops attempts that fall silent only when they do.
  virtual bool sends_heartbeats() const { return true; }
  // Whether the attempt has begun running: false while it waits in a scheduler's queue
  // (Slurm PENDING), where it cannot send heartbeats; silence counts only from then.
  virtual bool attempt_started(const std::string& /*attempt_id*/) const { return true; }
};

}  // namespace fk::orchestrator
