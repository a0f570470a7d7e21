// The campaign merge behind `fk collect`: every job file of a results folder copied
// whole into one campaign file, plus flat summary tables (docs/results-schema.md,
// "Campaign files").
//
// Invariants: the output is written through h5::Writer (a temporary file renamed
// into place), so it appears whole or not at all and an existing output is replaced
// atomically; job files are only read. A job file that cannot be read (not HDF5,
// truncated, not a job file, a job id seen before) is reported by name and left out;
// the merge goes on. A job file must hold the job its name says ("<job id>.h5"); one
// that holds another (renamed, or names swapped) is left out too, and so is one whose
// content hash (h5/file_sum.h) is not the one fk run recorded when it accepted the
// job (MergeOptions::expected_hashes: replaced or damaged since). Temporary "*.tmp.*"
// files and campaign files (an earlier output in the same folder) are skipped. Jobs
// are copied with h5::copy_object (h5/copy.h): same chunks and filters, every chunk
// read through its filters (so its Fletcher32 checksum is verified) and written again;
// /jobs/<id> carries the source file's content hash as attribute `source_hash`.
#pragma once

#include "results/campaign/job_digest.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fk::results {

struct MergeOptions {
  std::string results_dir;
  std::string output;      // "" = <results_dir>/campaign.h5
  std::string fk_version;  // recorded in the campaign file ("" = this build's version)
  bool copy_jobs = true;   // false: summaries only (for benchmarks)
  // Files already found damaged (file_check.h), with the reason: left out unopened,
  // reported like any other unreadable file.
  std::map<std::string, std::string> damaged;
  // Content hashes by job id, as fk run recorded them when it accepted each job file
  // (Journal::job_hashes); a job file whose hash differs is left out, named. Jobs not
  // listed are not compared.
  std::map<std::string, std::string> expected_hashes;
  // Called after each job file with its path and "" or the reason it was left out.
  std::function<void(const std::string& file, const std::string& problem)> on_file;
};

struct MergeResult {
  std::string output;
  int64_t jobs = 0, completed = 0, failed = 0;
  int64_t kernel_rows = 0, candidate_rows = 0;
  std::vector<std::string> problems;  // "file: reason" per job file left out
  std::vector<std::string> skipped;   // temporary and campaign files, not errors
  double seconds = 0;
};

// Merges the job files of options.results_dir into options.output. Throws fk::Error
// kNotFound when the folder does not exist, kInvalidArgument when it holds no job
// file, kIo when the output cannot be written (the old output, if any, stays as it
// was); per-file problems are returned instead.
MergeResult campaign_merge(const MergeOptions& options);

// The output path campaign_merge uses for `results_dir` when none is given.
std::string campaign_default_output(const std::string& results_dir);

}  // namespace fk::results
