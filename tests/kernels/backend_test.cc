// The Backend contract (kernels/backend.h), run once per backend (FK_TEST_BACKEND, see
// test_backend.h): copies round-trip bytes exactly, memset and fill write every element
// (fill rounds once to the dtype), device copies and the timer order on the stream, the
// cache flush and audit leave the device usable, facts describe the device, the
// capability query refuses what the baselines cannot run.
#include "kernels/test_backend.h"

#include "core/rng.h"
#include "kernels/cpu/elem.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

namespace fk::kernels {
namespace {

using test_support::test_backend;

Tensor host_random(DType dtype, Shape shape, const char* name) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  rng_fill_uniform(RngStream(7, name), ShardBox::whole(shape), -3.0f, 3.0f, v);
  return Tensor::borrow(v.data(), DType::kF32, shape).to_dtype(dtype);
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(BackendContract, FactsDescribeTheDevice) {
  Backend& b = test_backend();
  EXPECT_EQ(b.kind(), test_support::test_backend_kind());
  EXPECT_EQ(b.device().kind, b.kind());
  EXPECT_FALSE(b.facts().name.empty());
  EXPECT_GT(b.facts().cache_bytes, 0) << "the timing needs the cache size it must defeat";
  EXPECT_GT(b.facts().memory_bytes, 0);
  EXPECT_NE(b.facts().describe().find(b.facts().name), std::string::npos);
  if (b.kind() == DeviceKind::kCuda) {
    EXPECT_GT(b.facts().sm_count, 0);
    EXPECT_EQ(b.facts().arch.rfind("sm_", 0), 0u) << b.facts().arch;
    EXPECT_NE(b.stream(), nullptr) << "the CUDA backend works on a stream of its own, not the legacy default";
  }
  EXPECT_EQ(b.audit(), "");
}

TEST(BackendContract, UploadDownloadRoundTripsEveryDtypeExactly) {
  Backend& b = test_backend();
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const Tensor host = host_random(dt, {37, 129}, "roundtrip");
    const Tensor dev = b.to_device(host);
    EXPECT_EQ(dev.device(), b.device());
    EXPECT_TRUE(same_bytes(b.to_host(dev), host)) << dtype_name(dt);
  }
  std::vector<int64_t> ids = {5, -1, 1ll << 40, 0};
  const Tensor idx = Tensor::borrow(ids.data(), DType::kI64, {4});
  EXPECT_TRUE(same_bytes(b.to_host(b.to_device(idx)), idx));
  // A strided host view uploads as its elements in row-major order.
  const Tensor wide = host_random(DType::kF32, {4, 6}, "strided");
  const Tensor view = wide.slice(1, 2, 3);
  EXPECT_TRUE(same_bytes(b.to_host(b.to_device(view)), view.contiguous_copy()));
  // Zero-sized tensors are legal everywhere.
  const Tensor empty = b.empty(DType::kF32, {0, 8});
  EXPECT_EQ(b.to_host(empty).numel(), 0);
}

TEST(BackendContract, MemsetFillAndCopyWriteEveryElement) {
  Backend& b = test_backend();
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const int64_t n = 100003;  // not a multiple of any vector width
    Tensor t = b.empty(dt, {n});
    b.memset(t, 0xff);
    const Tensor bytes = b.to_host(t);
    const auto* p = static_cast<const unsigned char*>(bytes.data());
    EXPECT_TRUE(std::all_of(p, p + bytes.nbytes(), [](unsigned char c) { return c == 0xff; })) << dtype_name(dt);
    b.fill(t, 1.0 / 3.0);
    const Tensor filled = b.to_host(t).to_dtype(DType::kF32);
    const float want = static_cast<float>(Tensor::borrow(std::vector<float>{1.0f / 3.0f}.data(), DType::kF32, {1})
                                              .to_dtype(dt)
                                              .to_dtype(DType::kF32)
                                              .span<float>()[0]);
    for (float v : filled.span<float>()) ASSERT_EQ(v, want) << dtype_name(dt);
    const Tensor src = b.to_device(host_random(dt, {n}, "copy"));
    b.copy(t, src);
    EXPECT_TRUE(same_bytes(b.to_host(t), b.to_host(src))) << dtype_name(dt);
  }
  b.fill(b.empty(DType::kF32, {0}), 2.0);  // nothing to write, no error
}

// Random weights made on the device must be the host's bits: the model stage's fp32
// and low-precision runs and every layout compare against values made elsewhere.
TEST(BackendContract, FillUniformIsTheHostsRandomBlockRoundedOnce) {
  Backend& b = test_backend();
  const RngStream rng(11, "model.layers.0.mlp.up_proj.weight");
  // Rows [3, 8) x columns [40, 137) of a [9, 200] tensor, placed after 17 other elements.
  UniformBlock block{rng.key(), 200, 3, 5, 40, 97, -0.37f, 0.37f, 0};
  std::vector<float> want(static_cast<size_t>(block.numel()));
  rng_fill_uniform(rng, ShardBox{{9, 200}, {3, 40}, {5, 97}}, block.lo, block.hi, want);
  const Tensor host_want = Tensor::borrow(want.data(), DType::kF32, {block.numel()});
  for (DType dt : {DType::kF32, DType::kF16, DType::kBF16}) {
    Tensor dev = b.empty(dt, {17 + block.numel() + 5});
    b.fill(dev, 9.0);
    b.fill_uniform(dev, 17, block);
    const Tensor got = b.to_host(dev);
    EXPECT_TRUE(same_bytes(got.slice(0, 17, block.numel()).contiguous_copy(), host_want.to_dtype(dt)))
        << dtype_name(dt) << ": not the host's values rounded once";
    EXPECT_EQ(got.to_dtype(DType::kF32).data_as<float>()[16], 9.0f) << "wrote before its offset";
    EXPECT_EQ(got.to_dtype(DType::kF32).data_as<float>()[17 + block.numel()], 9.0f) << "wrote past its block";
  }
  // `add` is applied in fp32 after the draw (Gemma's 1 + w folded into the weight).
  UniformBlock shifted = block;
  shifted.add = 1.0f;
  Tensor dev = b.empty(DType::kF32, {block.numel()});
  b.fill_uniform(dev, 0, shifted);
  const Tensor got = b.to_host(dev);
  for (size_t i = 0; i < want.size(); i += 31) ASSERT_EQ(got.data_as<float>()[i], want[i] + 1.0f) << i;
  const std::string e = [&] {
    try {
      b.fill_uniform(dev, 1, block);
    } catch (const Error& err) {
      return std::string(err.what());
    }
    return std::string();
  }();
  EXPECT_NE(e.find("do not fit"), std::string::npos) << "a block past the tensor's end is refused: " << e;
}

TEST(BackendContract, MismatchedCopiesAreInvalidArgumentsNamingTheTensors) {
  Backend& b = test_backend();
  const Tensor a = b.empty(DType::kF32, {8});
  const Tensor c = b.empty(DType::kF32, {9});
  try {
    b.copy(a, c);
    FAIL() << "a copy between tensors of different sizes must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("fp32[8]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fp32[9]"), std::string::npos) << e.what();
  }
}

TEST(BackendContract, TimerMeasuresWorkEnqueuedBetweenItsMarks) {
  Backend& b = test_backend();
  auto timer = b.timer();
  const Tensor big = b.empty(DType::kF32, {int64_t{16} << 20});  // 64 MiB
  timer->start();
  timer->stop();
  const double empty_s = timer->seconds();
  timer->start();
  for (int i = 0; i < 8; ++i) b.fill(big, i);
  timer->stop();
  const double work_s = timer->seconds();
  EXPECT_GE(empty_s, 0);
  EXPECT_GT(work_s, empty_s) << "512 MiB of writes must take longer than nothing";
  EXPECT_LT(work_s, 10.0);
}

TEST(BackendContract, CacheFlushAndAuditLeaveTheDeviceUsable) {
  Backend& b = test_backend();
  b.flush_cache();
  b.flush_cache();
  b.synchronize();
  EXPECT_EQ(b.audit(), "");
  const Tensor t = b.to_device(host_random(DType::kF32, {64}, "after-flush"));
  EXPECT_EQ(b.to_host(t).numel(), 64);
}

TEST(BackendContract, CapabilityQueryRefusesWhatTheBaselineCannotRun) {
  Backend& b = test_backend();
  EXPECT_EQ(b.baseline("no_such_op"), nullptr);
  const OpDef& def = OpRegistry::global().def("rms_norm");
  OpCall host = def.make(OpShape{{{"tokens", 3}, {"hidden", 64}}, {1e-6}}, DType::kF32, RngStream(1, "cap"));
  EXPECT_TRUE(b.supports_op(def, b.to_device(host)));
  if (b.kind() == DeviceKind::kCuda) {
    // CUDA baselines take device tensors only: a host call is refused, not crashed on.
    EXPECT_FALSE(b.supports_op(def, host));
  }
}

// Graphs (Backend::capture): the CPU has none; on a device a capture runs nothing, each
// replay runs the recorded work on the tensors it captured, and the capture's scratch
// stays its own, so a tensor made after the capture is never written by a replay.
TEST(BackendContract, CapturedWorkRunsOnlyWhenReplayedAndKeepsItsScratch) {
  Backend& b = test_backend();
  const Tensor out = b.empty(DType::kF32, {4096});
  b.fill(out, 1.0);
  auto graph = b.capture([&] {
    const Tensor scratch = b.empty(DType::kF32, {4096});  // freed inside the capture
    b.fill(scratch, 7.0);
    b.copy(out, scratch);
  });
  if (b.kind() == DeviceKind::kCpu) {
    EXPECT_EQ(graph, nullptr);
    return;
  }
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(b.to_host(out).data_as<float>()[0], 1.0f) << "capturing ran the work";
  const Tensor later = b.empty(DType::kF32, {4096});  // the size of the capture's scratch
  b.fill(later, 3.0);
  graph->replay();
  graph->replay();
  const Tensor o = b.to_host(out), l = b.to_host(later);
  for (int64_t i = 0; i < 4096; ++i) {
    ASSERT_EQ(o.data_as<float>()[i], 7.0f) << i;
    ASSERT_EQ(l.data_as<float>()[i], 3.0f) << i << ": a replay wrote a tensor made after its capture";
  }
}

TEST(BackendContract, WorkThatWaitsCannotBeCapturedAndSaysSo) {
  Backend& b = test_backend();
  const Tensor t = b.empty(DType::kF32, {256});
  if (b.kind() == DeviceKind::kCpu) {  // no graphs: nothing is captured, nothing fails
    EXPECT_EQ(b.capture([&] { b.synchronize(); }), nullptr);
    return;
  }
  try {
    b.capture([&] {
      b.fill(t, 2.0);
      b.synchronize();
    });
    FAIL() << "a capture that waits for the stream must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("cannot be captured"), std::string::npos) << e.what();
  }
  b.fill(t, 5.0);  // the backend stays usable
  EXPECT_EQ(b.to_host(t).data_as<float>()[255], 5.0f);
  try {
    b.capture([&] { b.to_host(t); });
    FAIL() << "a capture that copies to pageable host memory must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
  }
  EXPECT_EQ(b.to_host(t).data_as<float>()[0], 5.0f);
}

TEST(BackendContract, StateIsReportedOrSaysSo) {
  Backend& b = test_backend();
  const DeviceState s = b.state();
  if (b.kind() == DeviceKind::kCpu) {
    EXPECT_FALSE(s.known());
    EXPECT_EQ(s.describe(), "not reported");
  } else if (s.known()) {
    EXPECT_GT(s.sm_clock_mhz, 0);
    EXPECT_NE(s.describe().find("MHz"), std::string::npos);
  }
}

}  // namespace
}  // namespace fk::kernels
