#include "core/error.h"
#include "core/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace fk {
namespace {

TEST(Tensor, EmptyIsContiguousAndAligned) {
  Tensor t = Tensor::empty(DType::kBF16, {3, 5});
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.nbytes(), 30u);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.strides(), (Shape{5, 1}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  EXPECT_EQ(t.describe(), "bf16[3, 5] cpu");
}

TEST(Tensor, SliceSharesStorageAndCopiesOut) {
  Tensor t = Tensor::empty(DType::kF32, {4, 6});
  for (int i = 0; i < 24; ++i) t.data_as<float>()[i] = static_cast<float>(i);
  Tensor cols = t.slice(1, 2, 3);
  EXPECT_FALSE(cols.is_contiguous());
  EXPECT_EQ(cols.shape(), (Shape{4, 3}));
  Tensor c = cols.contiguous_copy();
  EXPECT_EQ(c.span<float>()[0], 2.0f);
  EXPECT_EQ(c.span<float>()[3], 8.0f);
  EXPECT_EQ(c.span<float>()[11], 22.0f);
  cols.data_as<float>()[0] = -1;  // writes through to t
  EXPECT_EQ(t.data_as<float>()[2], -1.0f);
  EXPECT_THROW(t.slice(0, 3, 2), Error);
}

TEST(Tensor, ReshapeNeedsContiguousAndSameCount) {
  Tensor t = Tensor::zeros(DType::kF32, {2, 6});
  EXPECT_EQ(t.reshape({3, 4}).shape(), (Shape{3, 4}));
  EXPECT_THROW(t.reshape({5}), Error);
  EXPECT_THROW(t.slice(1, 0, 3).reshape({6}), Error);
}

TEST(Tensor, ToDtypeConverts) {
  float v[3] = {1.0f, 0.1f, -2.5f};
  Tensor t = Tensor::borrow(v, DType::kF32, {3});
  Tensor h = t.to_dtype(DType::kF16);
  EXPECT_EQ(h.dtype(), DType::kF16);
  EXPECT_EQ(h.data_as<uint16_t>()[1], f32_to_f16_bits(0.1f));
  Tensor back = h.to_dtype(DType::kF32);
  EXPECT_EQ(back.data_as<float>()[2], -2.5f);
}

// The CPU allocator counts what tensors hold; its peak starts again at a reset.
TEST(Tensor, CpuAllocatorCountsBytesInUseAndTheirPeak) {
  const Device cpu = Device::cpu();
  reset_memory_peaks(cpu);
  const auto before = memory_use(cpu);
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->peak_in_use, before->in_use);
  {
    const Tensor small = Tensor::empty(DType::kF32, {1000});              // heap
    const Tensor large = Tensor::empty(DType::kU8, {int64_t{40} << 20});  // its own mapping
    const auto during = memory_use(cpu);
    EXPECT_EQ(during->in_use - before->in_use, 4000 + (int64_t{40} << 20));
    EXPECT_EQ(during->reserved, during->in_use);
  }
  const auto after = memory_use(cpu);
  EXPECT_EQ(after->in_use, before->in_use);
  EXPECT_EQ(after->peak_in_use - before->in_use, 4000 + (int64_t{40} << 20));
  reset_memory_peaks(cpu);
  EXPECT_EQ(memory_use(cpu)->peak_in_use, after->in_use);
}

TEST(Tensor, UnknownDeviceAllocatorIsAClearError) {
  // fk_core alone registers no CUDA allocator (the CUDA backend does, at start-up).
  try {
    Tensor::empty(DType::kF32, {4}, Device::cuda(0));
    FAIL() << "allocation on an unregistered device kind succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos);
  }
}

}  // namespace
}  // namespace fk
