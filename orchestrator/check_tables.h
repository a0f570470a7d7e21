// fk check's report: the verdict tables read back from the job files of every pass.
//
// One table of op instances (every shape the models call, per candidate, with its
// verdict, precision against the baseline's and speedup) and one table per job (the
// candidate's verdict with the model-level evidence: last-layer error, greedy-token
// agreement, end-to-end and kernel speedups). A job whose file is missing (it did not
// finish) is named; everything that finished is shown, whatever failed later.
#pragma once

#include "core/spec/job.h"
#include "kernels/candidate/manifest.h"

#include <map>
#include <string>
#include <vector>

namespace fk::orchestrator {

struct CheckTables {
  std::vector<std::vector<std::string>> instances;  // rows, header first
  std::vector<std::vector<std::string>> jobs;
  std::map<std::string, int> exercised;  // candidate -> jobs in which its op was called
  std::vector<std::string> compile_logs;  // "<candidate> did not build: ..." blocks
  bool all_passed = true;
  int missing = 0;
  bool shapes_only = false;  // some job ran without the model stage
};

// Adds the rows of `job` (run at `scale`, with or without the model stage) from its
// file in `results_dir`, or names it as not finished. Prints that note to stderr.
void check_tables_add(CheckTables& tables, const spec::Job& job, const std::string& scale, bool model_stage,
                      const std::string& results_dir);

// Prints both tables and the closing line; returns fk check's exit status: 0 when
// `runner_ok` and every candidate PASSED wherever its op occurs, 128 + `signal` after
// a signal, else 1.
int check_tables_print(const CheckTables& tables, const std::vector<kernels::CandidateManifest>& manifests,
                       bool runner_ok, int signal);

}  // namespace fk::orchestrator
