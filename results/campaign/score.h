// The campaign score (docs/reports.md, "Score"): end-to-end speedup, correctness and
// coverage of a campaign's candidate kernels in one number.
//
// Items: one per (job, candidate) of every job whose candidate set replaces ops; a
// failed job (no candidates/ table) gives one item per op of its set with verdict
// JOB_FAILED. An item is applicable when the model called the candidate's op
// (`exercised`), or when its verdict is a failure other than UNSUPPORTED (a candidate
// that does not build or crashes fails wherever it is used; a failed job counts too).
// The only items that are not applicable are those UNSUPPORTED because the model has
// no call of their op. Each applicable item earns credit c = its job's end-to-end
// speedup (baseline / selected model-stage time, the whole set swapped in) when its
// verdict is PASSED, else 1.0 — an incorrect kernel earns no speedup credit.
//   G = geometric mean of c over applicable items
//   C = PASSED applicable items / applicable items     (correctness)
//   V = applicable items / items                       (coverage)
//   score = G x C x V   (0 when no item is applicable)
// Undefined (no items) for baseline-only campaigns.
#pragma once

#include "results/campaign/job_digest.h"
#include "results/h5/group.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fk::results {

struct ScoreItem {
  JobKeys job;
  std::string candidate, op, verdict, reason;
  bool exercised = false;
  double e2e_speedup = 0;     // NaN when the selected run did not happen
  double kernel_speedup = 0;  // geomean over the candidate's instances (NaN when none)
  double model_rel_err = 0, baseline_model_rel_err = 0;
  bool passed() const { return verdict == "PASSED"; }
  bool applicable() const { return exercised || (verdict != "PASSED" && verdict != "UNSUPPORTED"); }
  // The speedup credited to this item (see the file comment); only meaningful when applicable.
  double credit() const;
};

struct Score {
  int64_t items = 0, applicable = 0, passed = 0;  // passed: PASSED applicable items
  double geomean_credit = 0;  // G (NaN when nothing is applicable)
  double correctness = 0;     // C
  double coverage = 0;        // V
  double score = 0;           // G x C x V (NaN when there are no items)
  double geomean_passed = 0;  // geometric mean e2e speedup of the PASSED items alone (NaN when none)
  bool defined() const { return items > 0; }
};

// Items of the job under `root` (described by `digest`); none for baseline-only jobs.
std::vector<ScoreItem> score_items_read(const h5::Group& root, const JobDigest& digest);

// The score of `items` (any subset: a campaign, an architecture, a family).
Score score_compute(const std::vector<ScoreItem>& items);

}  // namespace fk::results
