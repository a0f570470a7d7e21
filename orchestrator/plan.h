// Expanding a campaign into jobs (what `fk plan` prints and `fk plan --emit` writes).
//
// Order: architectures x workloads x layouts x candidate sets x repetitions, as
// listed in the campaign. A layout that does not fit an architecture x workload is
// an error at the layout's line, or a skipped combination with unfit_layouts: skip.
#pragma once

#include "core/spec/job.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fk::orchestrator {

struct PlanSkip {
  std::string architecture;
  std::string workload;
  std::string layout;
  std::vector<std::string> reasons;
};

struct Plan {
  spec::JobFile job_file;
  std::vector<PlanSkip> skipped;
};

struct PlanTotals {
  int64_t jobs = 0;
  int64_t rank_slots = 0;           // sum of ranks over jobs
  int64_t max_ranks = 0;            // widest job
  int64_t max_memory_per_rank = 0;  // largest per-rank estimate
  int64_t skipped = 0;
};

std::optional<Plan> plan_campaign(const spec::Campaign& campaign, spec::Diagnostics& diags);
PlanTotals plan_totals(const Plan& plan);

// The human table: one row per job, then the skipped combinations and the totals.
// plan_write_table hands it to `out` row by row (a first pass over the jobs measures
// the columns), so printing a million jobs holds one row at a time;
// plan_format_table returns the same text as one string.
void plan_write_table(const Plan& plan, const std::function<void(std::string_view)>& out);
std::string plan_format_table(const Plan& plan);
// The JSON form (`fk plan --json`): one document, held in memory.
spec::Json plan_to_json(const Plan& plan);

}  // namespace fk::orchestrator
