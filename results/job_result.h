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
  std::string device;                   // "cpu: 2 x AMD EPYC", "cuda: NVIDIA H200"
  int64_t threads_per_rank = 1;
};

struct JobResult {
  spec::Job job;
  JobMeta meta;
  std::vector<StepTiming> steps;
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

// Percentile (linear interpolation between order statistics, as numpy's default) of
// `values` (unsorted); q in [0, 100]. NaN for an empty vector.
double percentile(std::vector<double> values, double q);

}  // namespace fk::results
