#include "results/campaign/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fk::results {
namespace {

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  out.reserve(v.size());
  for (double x : v)
    if (!std::isnan(x)) out.push_back(x);
  return out;
}

// Number of arrangements of n a's and m b's with U = u (pairs b > a), u = 0..n*m.
std::vector<double> u_distribution(size_t n, size_t m) {
  // f[i][j] = distribution for i a's and j b's; built over j for each i.
  std::vector<std::vector<std::vector<double>>> f(n + 1, std::vector<std::vector<double>>(m + 1));
  for (size_t i = 0; i <= n; ++i)
    for (size_t j = 0; j <= m; ++j) {
      std::vector<double>& d = f[i][j];
      d.assign(i * j + 1, 0.0);
      if (i == 0 || j == 0) {
        d[0] = 1;
        continue;
      }
      // The largest value is a b (it beats all i a's: +i) or an a (+0).
      const std::vector<double>& with_b = f[i][j - 1];
      const std::vector<double>& with_a = f[i - 1][j];
      for (size_t u = 0; u < with_b.size(); ++u) d[u + i] += with_b[u];
      for (size_t u = 0; u < with_a.size(); ++u) d[u] += with_a[u];
    }
  return f[n][m];
}

}  // namespace

double stats_geomean(const std::vector<double>& values) {
  double sum = 0;
  size_t n = 0;
  for (double v : values)
    if (std::isfinite(v) && v > 0) {
      sum += std::log(v);
      ++n;
    }
  return n == 0 ? std::numeric_limits<double>::quiet_NaN() : std::exp(sum / static_cast<double>(n));
}

double stats_mann_whitney_min_p(size_t n, size_t m) {
  if (n == 0 || m == 0) return 1;
  double log_c = std::lgamma(static_cast<double>(n + m + 1)) - std::lgamma(static_cast<double>(n + 1)) -
                 std::lgamma(static_cast<double>(m + 1));
  return std::exp(-log_c);
}

double stats_mann_whitney_greater(const std::vector<double>& a_in, const std::vector<double>& b_in) {
  const std::vector<double> a = finite(a_in), b = finite(b_in);
  const size_t n = a.size(), m = b.size();
  if (n == 0 || m == 0) return 1;
  // Ranks of the pooled sample (average ranks for ties).
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(n + m);
  for (double x : a) pooled.emplace_back(x, 0);
  for (double x : b) pooled.emplace_back(x, 1);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_b = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second == 1) rank_sum_b += avg_rank;
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dn = static_cast<double>(n), dm = static_cast<double>(m);
  const double u_b = rank_sum_b - dm * (dm + 1) / 2.0;  // pairs (a, b) with b > a, ties half
  if (!ties && n + m <= 40) {
    const std::vector<double> dist = u_distribution(n, m);
    double total = 0, upper = 0;
    const auto u = static_cast<size_t>(std::llround(u_b));
    for (size_t k = 0; k < dist.size(); ++k) {
      total += dist[k];
      if (k >= u) upper += dist[k];
    }
    return upper / total;
  }
  const double mean = dn * dm / 2.0;
  const double var = dn * dm / 12.0 * ((dn + dm + 1) - tie_term / ((dn + dm) * (dn + dm - 1)));
  if (var <= 0) return u_b > mean ? 0.0 : 1.0;
  const double z = (u_b - mean - 0.5) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

double stats_sign_test_greater(size_t k, size_t n) {
  if (n == 0) return 1;
  double p = 0;
  for (size_t i = k; i <= n; ++i)
    p += std::exp(std::lgamma(static_cast<double>(n + 1)) - std::lgamma(static_cast<double>(i + 1)) -
                  std::lgamma(static_cast<double>(n - i + 1)) - static_cast<double>(n) * std::log(2.0));
  return std::min(1.0, p);
}

double stats_signed_rank_greater(const std::vector<double>& values) {
  std::vector<std::pair<double, bool>> d;  // |value|, positive
  for (double v : values)
    if (std::isfinite(v) && v != 0) d.emplace_back(std::fabs(v), v > 0);
  const size_t n = d.size();
  if (n == 0) return 1;
  std::sort(d.begin(), d.end());
  double w_plus = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && d[j].first == d[i].first) ++j;
    const double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (d[k].second) w_plus += avg_rank;
    const double t = static_cast<double>(j - i);
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  if (!ties && n <= 50) {
    // Number of subsets of {1..n} with each rank sum: the null distribution of W+.
    const size_t max_sum = n * (n + 1) / 2;
    std::vector<double> count(max_sum + 1, 0.0);
    count[0] = 1;
    for (size_t r = 1; r <= n; ++r)
      for (size_t sum = max_sum; sum >= r; --sum) count[sum] += count[sum - r];
    const auto w = static_cast<size_t>(std::llround(w_plus));
    double upper = 0, total = 0;
    for (size_t sum = 0; sum <= max_sum; ++sum) {
      total += count[sum];
      if (sum >= w) upper += count[sum];
    }
    return upper / total;
  }
  const double dn = static_cast<double>(n);
  const double mean = dn * (dn + 1) / 4.0;
  const double var = dn * (dn + 1) * (2 * dn + 1) / 24.0 - tie_term / 48.0;
  if (var <= 0) return w_plus > mean ? 0.0 : 1.0;
  const double z = (w_plus - mean - 0.5) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

}  // namespace fk::results
