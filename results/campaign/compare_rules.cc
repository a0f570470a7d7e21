#include "results/campaign/compare_rules.h"

#include "core/stats.h"
#include "results/campaign/stats.h"
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace fk::results {
namespace {

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (std::isfinite(x)) out.push_back(x);
  return out;
}

}  // namespace

SpeedTest compare_speed(const std::vector<double>& old_in, const std::vector<double>& new_in, const CompareOptions& o) {
  SpeedTest t;
  const std::vector<double> a = finite(old_in), b = finite(new_in);
  t.n_old = a.size();
  t.n_new = b.size();
  if (a.empty() || b.empty()) {
    t.change = Change::kUntestable;
    t.why = "no samples";
    return t;
  }
  t.old_median = stats::median(a);
  t.new_median = stats::median(b);
  t.ratio = t.old_median > 0 ? t.new_median / t.old_median : NAN;
  const double p10_old = stats::percentile(a, 10), p10_new = stats::percentile(b, 10);
  t.low_ratio = p10_old > 0 ? p10_new / p10_old : NAN;
  if (std::max(t.old_median, t.new_median) < o.min_time_s) {
    t.change = Change::kUntestable;
    t.why = "too fast";
    return t;
  }
  if (stats_mann_whitney_min_p(a.size(), b.size()) > o.alpha) {
    t.change = Change::kUntestable;
    t.why = "too few samples";
    return t;
  }
  t.p_slower = stats_mann_whitney_greater(a, b);
  t.p_faster = stats_mann_whitney_greater(b, a);
  t.shift = std::log(t.low_ratio);
  const double up = 1 + o.threshold;
  if (t.ratio > up && t.low_ratio > up && t.p_slower < o.alpha) {
    t.change = Change::kWorse;
  } else if (t.ratio < 1 / up && t.low_ratio < 1 / up && t.p_faster < o.alpha) {
    t.change = Change::kBetter;
  }
  return t;
}

PackNoise compare_pack_noise(const std::vector<double>& shifts_in, const CompareOptions& o,
                             const std::vector<std::string>& groups_in) {
  if (!groups_in.empty() && groups_in.size() != shifts_in.size())
    throw std::invalid_argument(
        fmt::format("compare_pack_noise: {} groups for {} shifts", groups_in.size(), shifts_in.size()));
  PackNoise p;
  std::vector<double> shifts;
  std::map<std::string, std::vector<double>> by_group;
  for (size_t i = 0; i < shifts_in.size(); ++i) {
    if (!std::isfinite(shifts_in[i])) continue;
    shifts.push_back(shifts_in[i]);
    if (!groups_in.empty()) by_group[groups_in[i]].push_back(shifts_in[i]);
  }
  p.items = shifts.size();
  if (shifts.empty()) return p;
  p.shift = stats::median(shifts);
  const double up = std::log1p(o.threshold);
  p.jobs = by_group.size();
  const double job_up = std::log1p(o.threshold / 2);
  for (const auto& [group, group_shifts] : by_group) {
    const double g = stats::median(group_shifts);
    p.jobs_slower += g > job_up;
    p.jobs_faster += g < -job_up;
  }
  if (p.items >= kMinPackForNoise) {
    std::vector<double> dev;
    for (double s : shifts) dev.push_back(std::fabs(s - p.shift));
    p.sigma = stats::percentile(dev, 90) / 1.6449;  // the normal sigma with the same 90th percentile
    p.resolves_items = p.sigma <= up / 3;
  }
  std::vector<double> negated;
  for (double s : shifts) {
    p.slower += s > 0;
    p.faster += s < 0;
    negated.push_back(-s);
  }
  if (p.items < kMinPackItems) return p;
  p.p_slower = stats_signed_rank_greater(shifts);
  p.p_faster = stats_signed_rank_greater(negated);
  const size_t jobs_needed = p.jobs >= 2 ? (2 * p.jobs + 2) / 3 : 0;
  if (p.shift > up && p.p_slower < o.alpha && p.jobs_slower >= jobs_needed) p.change = Change::kWorse;
  if (p.shift < -up && p.p_faster < o.alpha && p.jobs_faster >= jobs_needed) p.change = Change::kBetter;
  return p;
}

Change compare_speed_in_pack(const SpeedTest& t, const PackNoise& pack, const CompareOptions& o) {
  const double margin = o.noise_z * pack.sigma;
  const double alpha = o.alpha / static_cast<double>(std::max<size_t>(1, pack.items));
  if (t.change == Change::kWorse && t.shift - pack.shift > margin && t.p_slower < alpha) return Change::kWorse;
  if (t.change == Change::kBetter && pack.shift - t.shift > margin && t.p_faster < alpha) return Change::kBetter;
  return t.change == Change::kUntestable ? Change::kUntestable : Change::kSame;
}

Change compare_error(double old_value, double new_value, const CompareOptions& o) {
  const bool old_nan = std::isnan(old_value), new_nan = std::isnan(new_value);
  if (old_nan && new_nan) return Change::kSame;
  if (new_nan) return Change::kWorse;
  if (old_nan) return Change::kBetter;
  if (new_value > o.precision_factor * old_value && new_value - old_value > o.precision_floor) return Change::kWorse;
  if (old_value > o.precision_factor * new_value && old_value - new_value > o.precision_floor) return Change::kBetter;
  return Change::kSame;
}

Change compare_agreement(double old_value, double new_value, const CompareOptions& o) {
  if (std::isnan(old_value) || std::isnan(new_value)) return Change::kSame;
  if (old_value - new_value > o.top1_drop) return Change::kWorse;
  if (new_value - old_value > o.top1_drop) return Change::kBetter;
  return Change::kSame;
}

Change compare_verdict(const std::string& old_verdict, const std::string& new_verdict) {
  if (old_verdict == new_verdict) return Change::kSame;
  if (old_verdict == "PASSED") return Change::kWorse;
  if (new_verdict == "PASSED") return Change::kBetter;
  return Change::kSame;
}

}  // namespace fk::results
