#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace fk::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> sorted_values(std::span<const double> values) {
  std::vector<double> v;
  v.reserve(values.size());
  for (double x : values)
    if (!std::isnan(x)) v.push_back(x);
  std::sort(v.begin(), v.end());
  return v;
}

// Percentile of sorted, non-empty `v`.
double sorted_percentile(const std::vector<double>& v, double q) {
  const double pos = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

double percentile(std::span<const double> values, double q) {
  const std::vector<double> v = sorted_values(values);
  return v.empty() ? kNaN : sorted_percentile(v, q);
}

double median(std::span<const double> values) { return percentile(values, 50); }

Summary summarize(std::span<const double> values) {
  const std::vector<double> v = sorted_values(values);
  Summary s;
  s.n = static_cast<int64_t>(v.size());
  if (v.empty()) {
    s.median = s.p10 = s.p90 = s.min = s.max = s.mean = kNaN;
    return s;
  }
  s.median = sorted_percentile(v, 50);
  s.p10 = sorted_percentile(v, 10);
  s.p90 = sorted_percentile(v, 90);
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.noise = s.n >= 2 && s.median != 0 ? (s.p90 - s.p10) / s.median : 0;
  return s;
}

double median_standard_error(std::span<const double> values) {
  const std::vector<double> v = sorted_values(values);
  if (v.empty()) return kNaN;
  const double m = sorted_percentile(v, 50);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::abs(x - m));
  std::sort(dev.begin(), dev.end());
  return 1.2533 * 1.4826 * sorted_percentile(dev, 50) / std::sqrt(static_cast<double>(v.size()));
}

}  // namespace fk::stats
