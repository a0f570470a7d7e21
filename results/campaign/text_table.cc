#include "results/campaign/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fk::results {

std::string TextTable::str(size_t indent) const {
  std::vector<size_t> width;
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows_) {
    std::string line(indent, ' ');
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string fmt_sci(double v) { return std::isfinite(v) ? fmt::format("{:.1e}", v) : "-"; }

std::string fmt_speedup(double v) { return std::isfinite(v) ? fmt::format("{:.2f}x", v) : "-"; }

std::string fmt_percent(double v) { return std::isfinite(v) ? fmt::format("{:.0f}%", 100 * v) : "-"; }

std::string fmt_fixed(double v, int decimals) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, decimals) : "-"; }

std::string fmt_seconds(double v) {
  if (!std::isfinite(v)) return "-";
  const double a = std::fabs(v);
  if (a < 1e-3) return fmt::format("{:.1f} us", v * 1e6);
  if (a < 1) return fmt::format("{:.2f} ms", v * 1e3);
  return fmt::format("{:.2f} s", v);
}

}  // namespace fk::results
