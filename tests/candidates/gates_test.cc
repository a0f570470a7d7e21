// device_time_bounded (kernels/candidate/gates.h): a device worker's reported spans
// stand when the supervisor's clock agrees with them (within the noise of the door),
// and are raised by what the clock saw beyond the door when they are too small.
#include "kernels/candidate/gates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace fk::kernels {
namespace {

// `n` calls of a kernel of `span` seconds whose worker reports `reported` (the span
// when honest) and whose door (clock minus span) is 30 us plus uniform jitter of
// +-`jitter`; the baseline's worker has the same door.
struct Calls {
  std::vector<double> span, wall, base_span, base_wall;
};
Calls calls(int n, double span, double reported, double jitter, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> j(-jitter, jitter);
  Calls c;
  for (int i = 0; i < n; ++i) {
    c.span.push_back(reported);
    c.wall.push_back(span + 30e-6 + j(rng));
    c.base_span.push_back(8e-6);
    c.base_wall.push_back(8e-6 + 30e-6 + j(rng));
  }
  return c;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

TEST(DeviceTimeBounded, HonestSpansStandEvenWhenTheDoorJittersByMoreThanTheKernel) {
  // A 3 us kernel behind a door that jitters by +-10 us: a per-call max(span, wall -
  // door) would charge it several us of jitter; the median test charges nothing.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const Calls c = calls(40, 3e-6, 3e-6, 10e-6, seed);
    const ChargedTimes t = device_time_bounded(c.span, c.wall, c.base_span, c.base_wall);
    EXPECT_NEAR(t.door_s, 30e-6, 6e-6) << "seed " << seed;  // +-10 us jitter: median within ~4 standard errors
    EXPECT_EQ(t.charged_s, 0) << "seed " << seed << ": excess " << t.excess_s << " allowance " << t.allowance_s;
    EXPECT_EQ(t.seconds, c.span);
  }
}

TEST(DeviceTimeBounded, ForgedSpansAreRaisedByWhatTheClockSaw) {
  // The worker says 1 us for a 200 us kernel: its wall is 230 us, the door 30 us.
  const Calls c = calls(20, 200e-6, 1e-6, 1e-6, 7);
  const ChargedTimes t = device_time_bounded(c.span, c.wall, c.base_span, c.base_wall);
  EXPECT_NEAR(t.excess_s, 199e-6, 2e-6);
  EXPECT_EQ(t.charged_s, t.excess_s);
  EXPECT_NEAR(median_of(t.seconds), 200e-6, 2e-6);
  // Halving a 50 us kernel's span is caught too (25 us hidden, allowance ~1-3 us).
  const Calls h = calls(20, 50e-6, 25e-6, 1e-6, 8);
  const ChargedTimes th = device_time_bounded(h.span, h.wall, h.base_span, h.base_wall);
  EXPECT_GT(th.charged_s, 20e-6);
  EXPECT_NEAR(median_of(th.seconds), 50e-6, 3e-6);
}

TEST(DeviceTimeBounded, AForgerGainsAtMostTheAllowance) {
  // Spans forged 10% low on a 100 us kernel with a steady door: inside the allowance
  // (10% of the span), so they stand; the gain is bounded by allowance_s.
  const Calls c = calls(20, 100e-6, 92e-6, 0.5e-6, 9);
  const ChargedTimes t = device_time_bounded(c.span, c.wall, c.base_span, c.base_wall);
  EXPECT_EQ(t.charged_s, 0);
  EXPECT_LE(t.excess_s, t.allowance_s);
  EXPECT_GE(median_of(t.seconds) + t.allowance_s, 100e-6 - 1e-6);
}

TEST(DeviceTimeBounded, ADoorNeverGoesNegativeAndMissingSamplesChargeNothing) {
  // A baseline whose spans exceed its walls (clock skew) gives a door of 0, not less;
  // the candidate's 3 us above its span are then its own (above the 1 us floor).
  const ChargedTimes t = device_time_bounded({10e-6, 10e-6}, {13e-6, 13e-6}, {20e-6, 20e-6}, {19e-6, 19e-6});
  EXPECT_EQ(t.door_s, 0);
  EXPECT_NEAR(t.charged_s, 3e-6, 1e-12);
  EXPECT_NEAR(t.seconds[0], 13e-6, 1e-12);
  EXPECT_TRUE(device_time_bounded({}, {}, {}, {}).seconds.empty());
  const ChargedTimes none = device_time_bounded({5e-6}, {}, {}, {});
  EXPECT_EQ(none.seconds, std::vector<double>{5e-6});
  EXPECT_EQ(none.charged_s, 0);
}

TEST(ConfirmedCharge, AChargeStandsOnlyWhenASecondLoopChargesToo) {
  // A forger hides 199 us in both loops: charged, the smaller of the two.
  const Calls c = calls(20, 200e-6, 1e-6, 1e-6, 11), c2 = calls(20, 200e-6, 1e-6, 1e-6, 12);
  const ChargedTimes a = device_time_bounded(c.span, c.wall, c.base_span, c.base_wall);
  const ChargedTimes b = device_time_bounded(c2.span, c2.wall, c2.base_span, c2.base_wall);
  ASSERT_GT(a.charged_s, 0);
  ASSERT_GT(b.charged_s, 0);
  const ChargedTimes both = confirmed_charge(a, b);
  EXPECT_EQ(both.charged_s, std::min(a.charged_s, b.charged_s));
  EXPECT_NEAR(both.seconds[0], c.span[0] + both.charged_s, 1e-12) << "the first loop's spans, charged";
  // An honest kernel over its allowance once, by jitter: the second loop clears it.
  const Calls h = calls(20, 3e-6, 3e-6, 1e-6, 13);
  ChargedTimes once = device_time_bounded(h.span, h.wall, h.base_span, h.base_wall);
  ASSERT_EQ(once.charged_s, 0);
  const ChargedTimes clean = once;
  once.charged_s = 2 * once.allowance_s;  // as if the first loop had gone over
  for (double& s : once.seconds) s += once.charged_s;
  const ChargedTimes cleared = confirmed_charge(once, clean);
  EXPECT_EQ(cleared.charged_s, 0);
  ASSERT_EQ(cleared.seconds.size(), h.span.size());
  for (size_t i = 0; i < h.span.size(); ++i) EXPECT_NEAR(cleared.seconds[i], h.span[i], 1e-15);
  EXPECT_EQ(cleared.excess_s, clean.excess_s) << "the figures of the loop that decided";
  // Nothing charged first: the second loop is not asked.
  EXPECT_EQ(confirmed_charge(clean, a).charged_s, 0);
}

}  // namespace
}  // namespace fk::kernels
