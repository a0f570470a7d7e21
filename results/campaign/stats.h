// Small statistics for campaign reports and comparisons: geometric means and the
// Mann-Whitney U test that decides whether two sets of timing samples differ beyond
// noise. Pure functions on plain vectors; NaN values are ignored everywhere. Medians
// and percentiles are core/stats.h (fk::stats), shared with the runner.
#pragma once

#include <cstddef>
#include <vector>

namespace fk::results {

// Geometric mean of the positive finite values; NaN when there are none.
double stats_geomean(const std::vector<double>& values);

// One-sided Mann-Whitney U test of "samples of `b` tend to be larger than those of
// `a`" against "a and b come from one distribution". Returns the p-value: small when
// b is larger. Exact (counting every arrangement) when |a| + |b| <= 40 and there are
// no ties; otherwise the normal approximation with tie and continuity corrections.
// 1 when either side is empty.
double stats_mann_whitney_greater(const std::vector<double>& a, const std::vector<double>& b);

// The smallest p-value stats_mann_whitney_greater can return for sample sizes n and m
// (1 / C(n + m, n)): when it exceeds the significance level no outcome can count as
// beyond noise.
double stats_mann_whitney_min_p(size_t n, size_t m);

// One-sided Wilcoxon signed-rank test of "the values tend to be positive" against
// "symmetric around 0". Zeros are dropped. Returns the p-value (small: mostly
// positive). Exact when at most 50 non-zero values remain and their magnitudes do not
// tie; otherwise the normal approximation with tie and continuity corrections. 1 when
// nothing remains.
double stats_signed_rank_greater(const std::vector<double>& values);

// One-sided sign test: the probability of at least k successes in n fair coin
// flips (ties already removed). 1 when n == 0.
double stats_sign_test_greater(size_t k, size_t n);

}  // namespace fk::results
