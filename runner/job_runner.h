// Running one job on one job group: builds the layout grid and its TP/PP/DP
// communicators, runs the model stage and the kernel stage on every rank, gathers
// every rank's records on the group leader (group rank 0), which writes the job's
// HDF5 file atomically. Collective over the group.
#pragma once

#include "collectives/communicator.h"
#include "core/spec/job.h"
#include "kernels/backends.h"

#include <string>

namespace fk::runner {

struct RunnerOptions {
  std::string results_dir;
  std::string campaign;
  kernels::BackendOptions backend;  // how each job's backend is made (kernels/backends.h)
  int64_t threads_per_rank = 1;
  std::string mpi_library;
  // Set by the orchestrator after an attempt of this job crashed or hung with its
  // candidates: they are reported CRASHED with this reason and not loaded (drop-and-retry).
  std::string quarantine_reason;
  std::string attempt;  // the orchestrator's attempt id (for logs and test seams)
};

// Path of a job's result file in `results_dir`.
std::string job_result_path(const std::string& results_dir, const std::string& job_id);

// What the leader reports about a finished job (one line in fk-runner's output).
struct JobSummary {
  double wall_s = 0;
  int64_t kernels = 0, kernels_passed = 0;
  double final_rel_err = 0;  // baseline vs fp32, last layer, prefill
  double top1 = 1;           // baseline vs fp32 greedy tokens, all steps
  std::string line() const;
};

// Runs `job` on `group` (whose size must equal the job's ranks). The summary is
// filled on the group leader only. The job's backend (job.backend) is made once here,
// on this rank's node-local device, and runs the model stage (with the backend's
// communicators between ranks) and the kernel stage; the candidates' gates run in
// workers on the device of each candidate (the job file's `stage_backends` attribute
// says which ran where).
JobSummary job_run(const spec::Job& job, collectives::Communicator& group, const RunnerOptions& options);

}  // namespace fk::runner
