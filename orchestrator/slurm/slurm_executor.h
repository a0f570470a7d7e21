// The Slurm executor: one sbatch job per attempt (docs/slurm.md says why), whose batch
// script — rendered from slurm/templates/attempt.sbatch — runs
// `srun --mpi=pmix --ntasks=<ranks> fk-runner --jobs ... --results ... --only ...`.
//
// Transport only: the orchestrator decides what to run and whether to retry; this
// submits, follows each job with one batched squeue (+ sacct) call per poll on a
// steady_timer, turns what Slurm did into an AttemptEnd (policy: slurm_track.h) and
// cancels with scancel. Slurm commands run on the executor's command thread
// (slurm_worker.h), so no call blocks the io_context; `done` is posted exactly once.
//
// Each attempt gets a folder, <attempts_dir>/<attempt id>/, holding the script and
// the files the script writes (attempt_files.h); it must be on a filesystem the
// compute nodes share, like the results folder.
#pragma once

#include "orchestrator/executor.h"
#include "orchestrator/slurm/slurm_client.h"
#include "orchestrator/slurm/slurm_script.h"
#include "orchestrator/slurm/slurm_track.h"
#include "orchestrator/slurm/slurm_worker.h"

#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <map>
#include <memory>

namespace fk::orchestrator {

struct SlurmExecutorOptions {
  SlurmScriptSettings script;  // executor.slurm settings, fk-runner, srun, --mpi
  std::string template_file;   // "" = slurm_default_template()
  std::string attempts_dir;    // "" = <results_dir>/.fk-slurm
  int capacity = 0;            // ranks in flight at once; 0 = let Slurm queue everything
  double poll_interval_s = 5;  // one squeue call per interval for all attempts
  int submit_retries = 3;      // sbatch attempts when the controller does not answer
  double submit_retry_delay_s = 10;
  SlurmPolicy policy;
  std::function<double()> clock;  // monotonic seconds; default std::chrono::steady_clock
};

class SlurmExecutor final : public Executor {
 public:
  // Loads and checks the template now (throws fk::Error naming the problem).
  SlurmExecutor(boost::asio::io_context& io, std::shared_ptr<SlurmClient> client, SlurmExecutorOptions options);
  // Cancels the jobs of attempts still in flight (scancel, synchronously) and stops.
  ~SlurmExecutor() override;

  std::string name() const override { return "slurm"; }
  int capacity() const override { return options_.capacity; }
  void launch(const LaunchRequest& request, Done done) override;
  void cancel(const std::string& attempt_id) override;
  std::vector<std::pair<std::string, std::string>> running() const override;
  bool attempt_started(const std::string& attempt_id) const override;

  // The folder of an attempt (script, started, exit_code).
  std::string attempt_dir(const LaunchRequest& request) const;

 private:
  struct Attempt {
    LaunchRequest request;
    Done done;
    std::string dir;
    std::string script;  // the rendered batch script
    double launched_at = 0;
    int submit_tries = 0;
    bool cancel_requested = false;  // before the job id was known
    bool started = false;           // Slurm has run it (it left the queue)
    SlurmTrack track;               // job_id empty until sbatch answered
  };
  double now() const;
  void submit(const std::shared_ptr<Attempt>& a);
  void submitted(const std::string& attempt_id, const SlurmSubmitResult& r);
  void schedule_poll();
  void poll();
  void polled(const std::vector<std::string>& attempt_ids, const SlurmQuery& q);
  void apply(const std::shared_ptr<Attempt>& a, const SlurmTrackDecision& d);
  void send_cancel(const std::string& attempt_id, const std::string& job_id);
  void finish(const std::shared_ptr<Attempt>& a, AttemptResult r);
  // Wraps a continuation so it does nothing once the executor is gone. Tasks on the
  // command thread touch no member: they get the client and this token by value.
  static std::function<void()> guarded(const std::weak_ptr<int>& alive, std::function<void()> f);

  boost::asio::io_context& io_;
  std::shared_ptr<SlurmClient> client_;
  SlurmExecutorOptions options_;
  std::string template_text_;
  std::map<std::string, std::shared_ptr<Attempt>> attempts_;  // by attempt id
  boost::asio::steady_timer timer_;
  bool timer_armed_ = false;
  bool query_in_flight_ = false;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  SlurmWorker worker_;  // last: destroyed first, while the rest is still valid
};

// The executor `fk run --executor slurm` uses: the real client (sbatch/squeue/sacct/
// scancel), the campaign's executor.slurm settings, executor.slots (when > 0) as the cap
// on ranks in flight, and fk-runner from runner_path().
std::unique_ptr<Executor> make_slurm_executor(boost::asio::io_context& io, const spec::ExecutorSpec& spec,
                                              SlurmExecutorOptions options = {});

// FK_SLURM_POLL_INTERVAL (seconds) overrides the default poll interval.
// scancel of a job an earlier orchestrator left (journal resume), if it is still one of
// ours (its name starts with "fk-"). Returns whether it cancelled something.
bool slurm_cancel_stale(const std::string& job_id);

}  // namespace fk::orchestrator
