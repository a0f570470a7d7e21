// device_time_bounded (kernels/candidate/gates.h): a device worker's reported spans
// stand when the supervisor's clock agrees with them, and are replaced by what the
// clock saw (less the door measured on the baseline's worker) when they are too small.
#include "kernels/candidate/gates.h"

#include <gtest/gtest.h>

namespace fk::kernels {
namespace {

TEST(DeviceTimeBounded, HonestSpansStandAndForgedOnesAreChargedByTheClock) {
  // The baseline's door: 30, 32 and 31 us over its spans; median 31 us.
  const std::vector<double> base_span = {100e-6, 100e-6, 100e-6}, base_wall = {130e-6, 132e-6, 131e-6};
  // Honest: wall = span + about the same door.
  const ChargedTimes honest = device_time_bounded({50e-6, 51e-6}, {81e-6, 81.5e-6}, base_span, base_wall);
  EXPECT_NEAR(honest.door_s, 31e-6, 1e-12);
  ASSERT_EQ(honest.seconds.size(), 2u);
  EXPECT_DOUBLE_EQ(honest.seconds[0], 50e-6);
  EXPECT_DOUBLE_EQ(honest.seconds[1], 51e-6);
  EXPECT_EQ(honest.clock_charged, 0);
  // Forged: the worker says 1 us, the supervisor saw 231 us: charged 200 us.
  const ChargedTimes forged = device_time_bounded({1e-6, 50e-6}, {231e-6, 81e-6}, base_span, base_wall);
  EXPECT_NEAR(forged.seconds[0], 200e-6, 1e-12);
  EXPECT_DOUBLE_EQ(forged.seconds[1], 50e-6);
  EXPECT_EQ(forged.clock_charged, 1);
}

TEST(DeviceTimeBounded, ADoorNeverGoesNegativeAndMissingSamplesChargeNothing) {
  // A baseline whose spans exceed its walls (clock skew) gives a door of 0, not less.
  const ChargedTimes t = device_time_bounded({10e-6}, {13e-6}, {20e-6}, {19e-6});
  EXPECT_EQ(t.door_s, 0);
  EXPECT_DOUBLE_EQ(t.seconds[0], 13e-6);
  EXPECT_EQ(t.clock_charged, 1);
  EXPECT_TRUE(device_time_bounded({}, {}, {}, {}).seconds.empty());
}

}  // namespace
}  // namespace fk::kernels
