// `fk compare OLD NEW`: regressions in speed and precision between two runs of the
// same campaign (campaign files or results folders), for the nightly gate.
//
// Jobs are matched by id (content-derived: the same campaign plans the same ids).
// Within a job, what is compared (rules in compare_rules.h):
//  - status: a job completed in OLD that failed in NEW, or is missing from NEW;
//  - kernel-stage instances, matched by (op, role, shape, params, dtype): the raw
//    timings (kernel_stage/timings/<index>), rel L2 vs fp64, and passed;
//  - model stage, runs baseline and selected: step times (samples: every iteration x
//    rank, pooled per run over the prefill step and over the decode steps), the
//    layer error vs fp32 (worst layer per run and step), KL and top-1 vs fp32;
//  - candidates: verdicts and model error per candidate op (candidates/summary), and
//    per instance (candidate, op, role, shape, params, dtype, rank) verdict, rel L2
//    and the candidate's timings (candidates/timings/<row>, row 0).
// Timing items are decided together, pack by pack, once every job has been read (the
// noise estimate needs them all; compare_rules.h). Items present on one side only
// are counted, not judged (a new job is not a
// regression; a job missing from NEW is).
#pragma once

#include "results/campaign/compare_rules.h"
#include "results/campaign/source.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fk::results {

enum class FindingKind { kJob, kSpeed, kPrecision, kVerdict };
std::string_view finding_kind_name(FindingKind kind);  // "job", "speed", "precision", "verdict"

struct Finding {
  bool regression = true;  // false: an improvement
  bool resolved = true;    // false: a single timing within a noisy pack (compare_rules.h): listed, not counted
  FindingKind kind = FindingKind::kSpeed;
  std::string job_id, job;  // id and label (job_label)
  std::string item;         // "kernel rms_norm attn.norm tokens=64,hidden=128 bf16", "model baseline decode", ...
  std::string metric;       // "median time", "rel L2 vs fp64", "verdict", ...
  std::string old_value, new_value, change, evidence;
};

struct CompareCounts {
  int64_t jobs_common = 0, jobs_only_old = 0, jobs_only_new = 0;
  int64_t timings = 0, timings_too_fast = 0, timings_too_few = 0;
  int64_t precision = 0;       // error, agreement and verdict figures compared
  int64_t unmatched_items = 0;  // instances or candidates on one side only
  std::vector<std::string> packs;  // one line per timing pack: items, median shift, noise
};

struct CompareResult {
  std::vector<Finding> findings;  // regressions and improvements, sorted by kind, job, item
  CompareCounts counts;
  int64_t regressions() const;   // resolved ones: what the exit status counts
  int64_t improvements() const;  // resolved ones
  int64_t unresolved() const;
};

// Compares NEW against OLD. kInvalidArgument when the two have no job id in common
// (not runs of the same campaign); fk::Error from reading a job is reported as a
// "job" regression for that job, not thrown.
CompareResult compare_campaigns(const CampaignSource& old_source, const CampaignSource& new_source,
                                const CompareOptions& options);

// The report: the rule line, the regression table, improvements and unresolved
// timings when `verbose` (else their counts), and a summary line.
std::string compare_format(const CompareResult& result, const CompareOptions& options, bool verbose);

}  // namespace fk::results
