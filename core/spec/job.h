// Jobs: one architecture x workload x layout x candidate set x repetition, fully
// resolved, as `fk plan --emit` writes them for fk-runner.
//
// A job's id is a hash of everything that determines its results (architecture
// values, workload, layout, candidate set, backend, seed, repetition, stage
// settings) and of nothing else, so adding or removing other jobs, renaming the
// campaign or editing a spec's source note never changes it.
#pragma once

#include "core/spec/campaign.h"
#include "core/spec/json_io.h"
#include "core/spec/memory.h"

#include <string>
#include <vector>

namespace fk::spec {

struct Job {
  std::string id;
  Architecture arch;
  Workload workload;
  Layout layout;
  CandidateSet candidates;
  Backend backend = Backend::kCpu;
  uint64_t seed = 0;
  int64_t repetition = 0;
  KernelStageSpec kernel_stage;
  ModelStageSpec model_stage;
  double time_limit_s = 600;
  MemoryEstimate memory;
};

// The content-derived id (12 hex digits).
std::string job_compute_id(const Job& job);
// Canonical texts of the parts a job id hashes, so a planner can compute each
// architecture's and workload's once and reuse it for all their jobs.
std::string job_id_part(const Architecture& arch);
std::string job_id_part(const Workload& workload);
std::string job_compute_id(const std::string& arch_part, const std::string& workload_part, const Job& job);

Json job_to_json(const Job& job);
Job job_from_json(const Json& j, const std::string& path);

struct JobFile {
  static constexpr int kVersion = 1;
  std::string campaign;
  std::string campaign_file;
  std::string scale;
  std::vector<Job> jobs;
};

Json job_file_to_json(const JobFile& f);
// Throws fk::Error naming the file and the JSON path of the first problem. Every
// value meets the spec loader's validation and limits (json_io.h, limits.h): a job
// file holds nothing a spec file could not.
JobFile job_file_from_json(const Json& j, const std::string& file);
JobFile job_file_read(const std::string& path);
// Writes atomically (temporary file, then rename).
void job_file_write(const std::string& path, const JobFile& f);

}  // namespace fk::spec
