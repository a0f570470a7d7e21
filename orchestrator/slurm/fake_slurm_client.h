// A scripted Slurm for unit tests: each submitted job walks through a list of steps
// (state, reason, exit code), one query per step unless told otherwise, and the fake
// injects what real clusters do — a pending reason that never clears, node failure,
// requeue with SLURM_RESTART_COUNT going up, time limits, cancellation, squeue
// forgetting finished jobs (MinJobAge), sacct missing, a controller that does not
// answer, sbatch refusing a job.
//
// It has its own clock (now()), advanced by `seconds_per_query` on every query, so
// tests of time-based policy (pending limits, time limits) run in microseconds and
// give the same answer every time: pass `[&] { return fake.now(); }` as the
// executor's clock. Like the batch script, it writes the attempt's exit_code file
// (next to the submitted script) when a job's script ends. Thread-safe: the executor
// calls it from its command thread while the test configures and inspects it.
#pragma once

#include "orchestrator/slurm/slurm_client.h"

#include <deque>
#include <mutex>

namespace fk::orchestrator {

struct FakeSlurmStep {
  SlurmState state = SlurmState::kRunning;
  std::string reason = "None";
  int exit_code = 0;        // final states: the script's exit code
  int signal = 0;           // final states: the signal that ended it
  int polls = 1;            // queries this step lasts (the last step lasts for ever)
  bool requeue = false;     // entering this step is a requeue: the restart count goes up
  bool exit_file = true;    // write the exit_code file like the script: final states after running,
                            // and requeues of a running job (the SIGTERM trap: "143 <restarts> <id> 1")
  bool terminated = false;  // the exit_code file notes SIGTERM (time limit, scancel)
};

class FakeSlurmClient final : public SlurmClient {
 public:
  FakeSlurmClient();

  // The steps of the next submitted job (queued: one plan per submission, in order).
  // Jobs submitted without a plan: PENDING (Priority), RUNNING, COMPLETED exit 0.
  void plan(std::vector<FakeSlurmStep> steps);
  void set_accounting(bool available);  // false: sacct missing / accounting disabled
  // Polls a final job stays in squeue (MinJobAge); 0: it is gone before any poll sees
  // it final; default -1: for ever. Then sacct (if available) reports it.
  void set_squeue_keeps(int polls);
  void fail_queries(int count, std::string error);  // the next `count` queries fail
  void fail_submits(int count, std::string error, bool transient);
  void set_seconds_per_query(double s);

  double now() const;
  int queries() const;
  std::vector<std::string> cancelled() const;  // job ids, in order of scancel calls
  std::vector<SlurmSubmit> submitted() const;
  std::vector<std::vector<std::string>> queried() const;  // the ids of each query

  SlurmSubmitResult submit(const SlurmSubmit& request) override;
  SlurmQuery query(const std::vector<std::string>& job_ids) override;
  std::string cancel(const std::string& job_id) override;

 private:
  struct Job {
    std::string id, attempt_dir;
    std::vector<FakeSlurmStep> steps;
    size_t step = 0;
    int polls_in_step = 0;
    int restarts = 0;
    bool ran = false;
    bool cancel_requested = false;
    bool final = false;
    int polls_final = 0;
    SlurmJobInfo info;
  };
  void advance(Job& job);
  void enter(Job& job, const FakeSlurmStep& step);
  void write_exit(const Job& job, int exit_code, bool terminated);

  mutable std::mutex mutex_;
  std::deque<std::vector<FakeSlurmStep>> plans_;
  std::map<std::string, Job> jobs_;
  int next_id_ = 1000;
  bool accounting_ = true;
  int squeue_keeps_ = -1;
  int fail_queries_ = 0;
  std::string query_error_;
  int fail_submits_ = 0;
  std::string submit_error_;
  bool submit_transient_ = false;
  double now_ = 0, seconds_per_query_ = 1;
  int queries_ = 0;
  std::vector<std::string> cancelled_;
  std::vector<SlurmSubmit> submitted_;
  std::vector<std::vector<std::string>> queried_;
};

}  // namespace fk::orchestrator
