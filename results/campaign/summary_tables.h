// SummaryTables: the flat tables of a campaign file — /summary/jobs (one row per
// job), /summary/kernels (job x kernel-stage op instance), /summary/candidates (job x
// candidate) — built job by job from digests and the jobs' own tables. Each loads in
// one call: pandas.DataFrame(h5py.File(f)["summary/jobs"][()]). Columns are listed in
// docs/results-schema.md ("Campaign files").
#pragma once

#include "results/campaign/job_digest.h"
#include "results/campaign/table_stack.h"
#include "results/h5/group.h"

#include <string>

namespace fk::results {

class SummaryTables {
 public:
  // Adds job `digest` whose data are under `root`; `source_file` is where it came from.
  // Reads root's kernel_stage/instances and candidates/summary (when present).
  void add_job(const JobDigest& digest, const h5::Group& root, const std::string& source_file);
  // Writes the three tables as "jobs", "kernels" and "candidates" under `summary`.
  void write(h5::Group& summary);

  size_t kernel_rows() const { return kernels_.rows(); }
  size_t candidate_rows() const { return candidates_.rows(); }

 private:
  TableStack jobs_, kernels_, candidates_;
};

// The key columns that prefix every row of /summary/kernels and /summary/candidates.
std::vector<TableStack::Key> summary_job_keys(const JobKeys& keys);

}  // namespace fk::results
