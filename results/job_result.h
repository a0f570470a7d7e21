// The result of one job as the runner's group leader writes it: one HDF5 file per
// job, written to a temporary name and renamed into place (a crash never leaves a
// half file). The schema is documented in docs/results-schema.md; raw samples (every
// timed iteration of every rank) are kept next to the summaries.
#pragma once

#include "core/spec/job.h"
#include "core/tensor.h"
#include "results/records.h"

#include <string>
#include <vector>

namespace fk::results {

inline constexpr int kJobSchemaVersion = 1;

struct JobMeta {
  std::string campaign;
  std::string status = "completed";  // completed | failed
  std::string error;                 // why, when failed
  std::vector<std::string> rank_hosts;
  std::string started_at, finished_at;  // ISO 8601 UTC
  double wall_s = 0;
  std::string fk_version, compiler, mpi_library, blas;
  std::string device;                   // rank 0's backend: DeviceFacts::describe()
  // The device of every rank around its kernel stage: "rank 0 cuda:0: sm 1980 MHz, ..."
  // (DeviceState::describe()); empty where the stage did not run.
  std::vector<std::string> device_state_start, device_state_end;
  std::string stage_backends;           // "model: cpu, kernel: cuda:0, candidates: cpu"
  int64_t threads_per_rank = 1;
};

struct JobResult {
  spec::Job job;
  JobMeta meta;
  std::vector<StepTiming> steps;
  std::vector<MemoryPeak> memory;      // one per (run, rank) where the allocator counts
  int64_t memory_estimate_bytes = 0;   // the planner's per-rank estimate (core/spec/memory.h)
  std::string reference_weights;       // how the fp32 run held its weights: "resident", "streamed"; "" : no model stage
  std::vector<OpTiming> ops;
  std::vector<LayerError> layers;
  std::vector<LogitStats> logits;
  std::vector<KernelInstanceResult> kernels;  // one per (instance, rank)
  std::vector<CandidateSummary> candidates;          // one per candidate of the job's set
  std::vector<CandidateInstanceRecord> candidate_instances;
  Tensor fp32_logits;                                 // [steps, batch, vocab] fp32, or undefined
  int64_t traced_rows_per_sequence = 0;
};

// Writes `result` to `path` atomically. Throws fk::Error(kIo) naming the file.
void job_result_write(const std::string& path, const JobResult& result);

}  // namespace fk::results
