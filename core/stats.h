// Order statistics of timing samples: the one median, percentile and summary that the
// runner, the result files, fk report and fk compare all use (docs/results-schema.md
// "Definitions of the figures"). Pure functions of their input.
//
// Every function ignores NaN values (a missing sample); "empty" below means "no value
// left once NaN values are dropped". Percentiles interpolate linearly between order
// statistics, as numpy's default (numpy.percentile(..., method="linear")).
#pragma once

#include <cstdint>
#include <span>

namespace fk::stats {

// The q-th percentile of `values` (unsorted), q in [0, 100] (clamped): 0 is the
// minimum, 100 the maximum, 50 the median. NaN when empty.
double percentile(std::span<const double> values, double q);

// percentile(values, 50): the middle value, or the mean of the two middle values for
// an even count. NaN when empty.
double median(std::span<const double> values);

// A sample summarised. n counts the values used (NaN values left out); every other
// figure is NaN when n == 0.
struct Summary {
  int64_t n = 0;
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0, mean = 0;
  double noise = 0;  // (p90 - p10) / median; 0 when n < 2 or the median is 0
};

Summary summarize(std::span<const double> values);

// The standard error of the median of `values`, estimated robustly:
// 1.2533 x 1.4826 x MAD / sqrt(n) (MAD: the median absolute deviation from the
// median; 1.4826 x MAD estimates the standard deviation of normal samples, and the
// median's standard error is sqrt(pi/2) = 1.2533 times the mean's). NaN when empty.
double median_standard_error(std::span<const double> values);

}  // namespace fk::stats
