// The CUDA backend's device tracer (CUPTI) on a GPU (label gpu): a window's span runs
// from its first device work's start to its last one's end, host time between two
// launches included; its busy time is the union of the work's intervals, without it.
#include "core/device.h"
#include "core/dtype.h"
#include "kernels/backend.h"
#include "kernels/backends.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace fk::kernels {
namespace {

TEST(CudaTracer, BusyTimeLeavesOutTheHostGapBetweenLaunches) {
  const auto backend = backend_create(DeviceKind::kCuda, 0);
  const auto tracer = backend->tracer();
  ASSERT_NE(tracer, nullptr);
  const Tensor a = backend->empty(DType::kU8, {int64_t{64} << 20});
  backend->memset(a, 1);
  backend->synchronize();
  tracer->begin();
  backend->memset(a, 2);
  backend->synchronize();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // host time between two launches
  backend->memset(a, 3);
  const DeviceWork w = tracer->end();
  ASSERT_TRUE(w.error.empty()) << w.error;
  EXPECT_EQ(w.activities, 2);
  EXPECT_GE(w.span_s, 30e-3);
  EXPECT_GT(w.busy_s, 0.0);
  // Two 64 MiB memsets take well under a millisecond each on any data-centre GPU.
  EXPECT_LT(w.busy_s, 5e-3);
  EXPECT_LE(w.busy_s, w.span_s);

  // Back to back, the busy time is the span less the launch gap: close to it.
  tracer->begin();
  backend->memset(a, 4);
  const DeviceWork one = tracer->end();
  ASSERT_TRUE(one.error.empty()) << one.error;
  EXPECT_EQ(one.activities, 1);
  EXPECT_DOUBLE_EQ(one.busy_s, one.span_s);
}

}  // namespace
}  // namespace fk::kernels
