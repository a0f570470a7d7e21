// core/stats.h: the one median, percentile and summary (numpy's linear interpolation;
// NaN values left out; NaN for no values).
#include "core/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fk {
namespace {

using V = std::vector<double>;
const double kNaN = std::nan("");

TEST(CoreStats, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(stats::median(V{3, 1, 2}), 2.0);
  EXPECT_EQ(stats::median(V{4, 1, 3, 2}), 2.5);  // the mean of the two middle values, not the upper one
  EXPECT_EQ(stats::median(V{5, 5, 1, 9, 7}), 5.0);
}

TEST(CoreStats, OneValueIsEveryPercentile) {
  for (double q : {0.0, 10.0, 50.0, 90.0, 100.0}) EXPECT_EQ(stats::percentile(V{7}, q), 7.0) << q;
  const stats::Summary s = stats::summarize(V{7});
  EXPECT_EQ(s.n, 1);
  EXPECT_EQ(s.median, 7.0);
  EXPECT_EQ(s.min, 7.0);
  EXPECT_EQ(s.max, 7.0);
  EXPECT_EQ(s.mean, 7.0);
  EXPECT_EQ(s.noise, 0.0);  // n < 2
}

TEST(CoreStats, EmptyIsNaN) {
  EXPECT_TRUE(std::isnan(stats::median(V{})));
  EXPECT_TRUE(std::isnan(stats::percentile(V{}, 10)));
  EXPECT_TRUE(std::isnan(stats::median(V{kNaN, kNaN})));  // nothing left once NaN values are dropped
  const stats::Summary s = stats::summarize(V{});
  EXPECT_EQ(s.n, 0);
  for (double x : {s.median, s.p10, s.p90, s.min, s.max, s.mean}) EXPECT_TRUE(std::isnan(x));
  EXPECT_EQ(s.noise, 0.0);
}

TEST(CoreStats, NaNValuesAreLeftOut) {
  EXPECT_EQ(stats::median(V{3, 1, 2, kNaN}), 2.0);
  const stats::Summary s = stats::summarize(V{kNaN, 2, 4});
  EXPECT_EQ(s.n, 2);
  EXPECT_EQ(s.mean, 3.0);
  EXPECT_EQ(s.min, 2.0);
}

TEST(CoreStats, PercentilesInterpolateLikeNumpy) {
  const V v{4, 1, 3, 2};
  EXPECT_EQ(stats::percentile(v, 0), 1.0);  // endpoints: the minimum and the maximum
  EXPECT_EQ(stats::percentile(v, 100), 4.0);
  EXPECT_NEAR(stats::percentile(v, 10), 1.3, 1e-12);  // numpy.percentile([1, 2, 3, 4], 10)
  EXPECT_NEAR(stats::percentile(v, 90), 3.7, 1e-12);
  EXPECT_NEAR(stats::percentile(v, 25), 1.75, 1e-12);
  EXPECT_EQ(stats::percentile(v, -5), 1.0);  // clamped to [0, 100]
  EXPECT_EQ(stats::percentile(v, 150), 4.0);
}

TEST(CoreStats, SummaryAndNoise) {
  V v;
  for (int i = 11; i >= 1; --i) v.push_back(i);  // 1..11, unsorted
  const stats::Summary s = stats::summarize(v);
  EXPECT_EQ(s.n, 11);
  EXPECT_EQ(s.median, 6.0);
  EXPECT_EQ(s.p10, 2.0);
  EXPECT_EQ(s.p90, 10.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 11.0);
  EXPECT_EQ(s.mean, 6.0);
  EXPECT_NEAR(s.noise, 8.0 / 6.0, 1e-12);  // (p90 - p10) / median
  EXPECT_EQ(s.median, stats::median(v));
  EXPECT_EQ(s.p10, stats::percentile(v, 10));
  EXPECT_EQ(stats::summarize(V{-1, 0, 1}).noise, 0.0);  // zero median
  EXPECT_EQ(stats::summarize(V{2, 2, 2}).noise, 0.0);
}

TEST(CoreStats, MedianStandardErrorFromTheMedianAbsoluteDeviation) {
  // {1, 2, 3, 4, 100}: median 3, deviations {2, 1, 0, 1, 97}, MAD 1; the outlier
  // moves nothing.
  EXPECT_NEAR(stats::median_standard_error(V{1, 2, 3, 4, 100}), 1.2533 * 1.4826 / std::sqrt(5.0), 1e-12);
  EXPECT_EQ(stats::median_standard_error(V{5, 5, 5, 5}), 0.0);
  // Four times the samples of the same spread: half the error.
  V few, many;
  for (int i = 0; i < 10; ++i) few.push_back(i);
  for (int r = 0; r < 4; ++r) many.insert(many.end(), few.begin(), few.end());
  EXPECT_NEAR(stats::median_standard_error(many), stats::median_standard_error(few) / 2, 1e-12);
  EXPECT_TRUE(std::isnan(stats::median_standard_error(V{})));
  EXPECT_TRUE(std::isnan(stats::median_standard_error(V{kNaN})));
}

}  // namespace
}  // namespace fk
