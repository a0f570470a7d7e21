// ReportData: the plain records `fk report` turns into text and HTML — read once from
// a campaign file or results folder, one job at a time. Reporters (report_text.h,
// report_html.h) only format these records; all aggregation rules live here and in
// score.h, and docs/reports.md states them.
#pragma once

#include "results/campaign/job_digest.h"
#include "results/campaign/score.h"
#include "results/campaign/source.h"

#include <map>
#include <string>
#include <vector>

namespace fk::results {

// One architecture x op over every job of the architecture.
struct ArchOpRow {
  std::string architecture, family, op;
  int64_t jobs = 0;             // jobs in which the kernel stage ran the op
  int64_t instances = 0;        // job x instance rows
  int64_t passed = 0;           // of those, within tolerance of the fp64 reference
  double max_rel_l2 = 0;        // worst baseline rel L2 vs fp64
  double step_s = 0;            // mean over jobs of sum(median_s x calls_per_step): baseline time per step
  std::map<std::string, int64_t> verdicts;  // candidate verdicts (job x candidate)
  double kernel_speedup = 0;    // geomean of candidate/baseline instance speedups (NaN: none)
  double e2e_speedup = 0;       // geomean of credited e2e speedups of exercised items (NaN: none)
};

// Relative error of the residual stream after each layer, prefill step, one run of one job.
struct LayerTrace {
  JobKeys job;
  std::string run;  // "baseline", "selected"
  std::vector<int64_t> layers;
  std::vector<double> rel_err_vs_fp32;
};

struct ReportData {
  std::string source;      // what was read (CampaignSource::describe)
  std::string campaign;    // campaign name(s)
  std::string created_at;  // of the campaign file, "" for folders
  std::vector<JobDigest> jobs;  // in job id order
  std::vector<ScoreItem> items;
  std::vector<ArchOpRow> arch_ops;  // sorted by architecture, op
  std::vector<LayerTrace> traces;
  std::vector<std::string> problems;  // jobs or files that could not be read
  std::vector<std::string> devices;   // distinct device strings
  bool has_candidates() const { return !items.empty(); }
};

// Reads every job of `source`. A job that cannot be read is listed in problems and
// left out; nothing throws for a single bad job.
ReportData report_data_read(const CampaignSource& source);

// Aggregates over a group of jobs: a family, or a FastKernels category.
struct GroupRow {
  std::string name;
  int64_t jobs = 0, architectures = 0;
  int64_t kernel_instances = 0, kernels_passed = 0;
  double geomean_baseline_err = 0;  // geomean of the jobs' baseline last-layer error vs fp32 (NaN: no job)
  Score score;                      // over the group's items
};
// Per family (family from the architecture spec, model_type when empty), by name.
std::vector<GroupRow> report_families(const ReportData& data);
// Per FastKernels category (JobKeys::category), every one of the benchmark's 8 in its
// order, those without a job of the campaign too (0 jobs: what the campaign does not
// cover); jobs whose category is unknown last, as "-".
std::vector<GroupRow> report_categories(const ReportData& data);

// Speedup of each job against the same architecture, workload, candidate set and
// repetition on one rank (tp1pp1dp1): baseline model-stage time of the 1-rank job
// over this job's. NaN when there is no 1-rank job to compare with.
double report_layout_speedup(const ReportData& data, const JobDigest& job);

}  // namespace fk::results
