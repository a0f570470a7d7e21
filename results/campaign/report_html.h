// The HTML reporter of `fk report --html FILE`: one self-contained page (inline CSS
// and SVG charts, no scripts, no external assets; well-formed XML) with the score,
// the report tables and three kinds of chart:
//  - speedup against layout: credited e2e speedup of the candidates per layout and
//    architecture, or (baseline-only campaigns) the speedup of each layout over the
//    same job on one rank;
//  - relative error against layer: the residual stream's error vs the fp32 run after
//    each layer (prefill), per architecture x workload, one line per layout and run;
//  - time split: compute, communication and the rest of the baseline run per job
//    (per architecture x workload x layout when there are many jobs).
#pragma once

#include "results/campaign/report_data.h"

#include <string>

namespace fk::results {

// Limits that keep the page readable for campaigns of thousands of jobs.
inline constexpr size_t kHtmlMaxErrorCharts = 12;
inline constexpr size_t kHtmlMaxLinesPerChart = 8;
inline constexpr size_t kHtmlMaxTimeRows = 60;

// The page.
std::string report_html(const ReportData& data);

}  // namespace fk::results
