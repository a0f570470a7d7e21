#include "collectives/probe_format.h"

#include <fmt/format.h>

namespace fk::collectives {

namespace {

// nccl-tests' precision rule for the time column: fewer decimals as it grows.
std::string format_time(double us) {
  if (us >= 10000.0) return fmt::format("{:.0f}", us);
  if (us >= 100.0) return fmt::format("{:.1f}", us);
  return fmt::format("{:.2f}", us);
}

void append_header(std::string& out, const ProbeRow& row) {
  out +=
      fmt::format("# {} on {} rank{}\n", probe_collective_name(row.collective), row.ranks, row.ranks == 1 ? "" : "s");
  out += fmt::format("# {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>9}  {:>8}  {:>8}  {:>8}\n", "size", "count", "type",
                     "redop", "root", "time", "algbw", "busbw", "#wrong");
  std::string units = fmt::format("# {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>9}  {:>8}  {:>8}", "(B)", "(elements)", "",
                                  "", "", "(us)", "(GB/s)", "(GB/s)");
  out += units + "\n";
}

}  // namespace

std::string probe_format_table(const std::vector<ProbeRow>& rows) {
  std::string out;
  double busbw_sum = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const ProbeRow& r = rows[i];
    if (i == 0 || rows[i - 1].collective != r.collective || rows[i - 1].ranks != r.ranks) append_header(out, r);
    out += fmt::format("  {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>9}  {:>8.2f}  {:>8.2f}  {:>8}\n", r.bytes, r.count,
                       dtype_name(r.dtype), r.op ? reduce_op_name(*r.op) : "-", r.root, format_time(r.time_us),
                       r.algbw_gbs, r.busbw_gbs, r.wrong);
    busbw_sum += r.busbw_gbs;
  }
  if (!rows.empty())
    out += fmt::format("# Avg bus bandwidth: {:.4f} GB/s over {} rows\n", busbw_sum / static_cast<double>(rows.size()),
                       rows.size());
  return out;
}

}  // namespace fk::collectives
