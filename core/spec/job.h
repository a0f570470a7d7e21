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

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fk::spec {

struct Job {
  std::string id;
  Architecture arch;
  Workload workload;
  Layout layout;
  CandidateSet candidates;
  DeviceKind backend = DeviceKind::kCpu;
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

// A job's JSON: every field, with "architecture" and "workload" set to `arch` and
// `workload`. The full form (job_to_json; the job_json of a results file) holds their
// values; a job file holds keys of its tables instead (below).
Json job_to_json(const Job& job, Json arch, Json workload);
Json job_to_json(const Job& job);
// Reads the full form; throws fk::Error at the JSON path of the first problem.
Job job_from_json(const Json& j, const std::string& path);
// The two halves of reading either form: every field but "architecture", "workload"
// and the id check; then, once the caller has set job.arch and job.workload, the check
// that "id" is the content's (given the id parts of the two, job_id_part).
Job job_fields_from_json(const JsonIn& in);
void job_check_id(const JsonIn& in, const Job& job, const std::string& arch_part, const std::string& workload_part);

// The job file (`fk plan --emit`, <results>/jobs.json; read by fk-runner and fk status).
//
// Format "fastkernels-jobs", version 2: the header (campaign, campaign_file, scale),
// then the tables "architectures" and "workloads" (objects: key -> full value, each
// distinct value once), then "jobs": an array of jobs in the form above whose
// "architecture" and "workload" are keys of those tables, one job per line. A key is
// "<name>@<preset>#<hash of the value's JSON>"; readers treat it as an opaque string.
// Version 1 embedded both values in every job (2.4-2.8 KB per job for the shipped
// architectures, and written as one in-memory document); this reader rejects it.
struct JobFile {
  static constexpr const char* kFormat = "fastkernels-jobs";
  static constexpr int kVersion = 2;
  std::string campaign;
  std::string campaign_file;
  std::string scale;
  std::vector<Job> jobs;
};

// Writes the job file's text to `out` piece by piece (the tables, then one job at a
// time), never holding the whole document: memory beyond `f` is the tables and one job.
void job_file_write(const JobFile& f, const std::function<void(std::string_view)>& out);
// Writes atomically (temporary file, then rename), streaming as above.
void job_file_write(const std::string& path, const JobFile& f);
// The document job_file_write writes, as JSON (tests and tools; holds all of it).
Json job_file_to_json(const JobFile& f);
// Throws fk::Error naming the file and the JSON path of the first problem: not a job
// file, another version, a table entry or job field that fails the spec loader's
// validation and limits (json_io.h, limits.h; a job file holds nothing a spec file
// could not), a job whose key names no table entry, or an id that does not match.
JobFile job_file_from_json(const Json& j, const std::string& file);
// The same checks on the file's text, parsed job by job (job_file_read.cc); also refuses a
// top-level field that appears twice. job_file_read reads `path` with it.
JobFile job_file_parse(std::string_view text, const std::string& file);
JobFile job_file_read(const std::string& path);

}  // namespace fk::spec
