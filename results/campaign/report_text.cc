#include "results/campaign/report_text.h"

#include "results/campaign/report_tables.h"
#include "results/campaign/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace fk::results {

std::string report_text(const ReportData& data) {
  std::string out;
  int64_t completed = 0;
  for (const JobDigest& d : data.jobs) completed += d.status == "completed";
  out += fmt::format("FastKernels campaign report: {}\n", data.campaign.empty() ? "(unnamed)" : data.campaign);
  out += fmt::format("source: {}{}\n", data.source, data.created_at.empty() ? "" : ", created " + data.created_at);
  std::string devices;
  for (const auto& d : data.devices) devices += (devices.empty() ? "" : ", ") + d;
  out += fmt::format("jobs: {} ({} completed, {} failed); devices: {}\n", data.jobs.size(), completed,
                     static_cast<int64_t>(data.jobs.size()) - completed, devices.empty() ? "-" : devices);

  const Score score = score_compute(data.items);
  out += "\nScore (docs/reports.md): G = geomean e2e speedup credited (non-PASSED = 1.0), C = PASSED fraction,"
         " V = coverage (applicable items)\n";
  out += "  " + report_score_line(score) + "\n";
  if (score.defined())
    out += fmt::format("  geomean e2e speedup of PASSED items alone: {}\n", fmt_speedup(score.geomean_passed));

  for (const ReportTable& t : report_tables(data)) {
    TextTable tt(t.header);
    for (const auto& row : t.rows) tt.add(row);
    out += "\n" + t.title + "\n" + tt.str();
  }
  if (!data.problems.empty()) {
    out += fmt::format("\nLeft out ({}):\n", data.problems.size());
    for (const auto& p : data.problems) out += "  " + p + "\n";
  }
  return out;
}

}  // namespace fk::results
