// The tables of `fk report`, built once from ReportData and rendered by both
// reporters (text: report_text.h, HTML: report_html.h), so the two always agree.
// Cells are formatted strings (text_table.h formats); "-" marks a missing figure.
#pragma once

#include "results/campaign/report_data.h"

#include <string>
#include <vector>

namespace fk::results {

struct ReportTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// Jobs sorted for display: architecture, workload, tp, pp, dp, candidate set, repetition.
std::vector<const JobDigest*> report_sorted_jobs(const ReportData& data);

// "PASSED 3, INCORRECT_NUMERICAL 1" (or "-" when empty).
std::string report_verdict_counts(const std::map<std::string, int64_t>& verdicts);

// The score line: "score = G x C x V = ..." or why there is none.
std::string report_score_line(const Score& score);

// In order: kernels per architecture and op; model stage per job; families; and,
// for campaigns with candidates, candidates per job.
std::vector<ReportTable> report_tables(const ReportData& data);

}  // namespace fk::results
