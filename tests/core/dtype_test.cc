// Exhaustive tests of the fp16/bf16 conversions: every 16-bit pattern, every
// rounding midpoint between neighbours, and agreement with the compiler's _Float16.
#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace fk {
namespace {

bool is_nan16(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool is_nan_bf16(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0; }

TEST(Fp16, WideningThenNarrowingIsIdentityForEveryPattern) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    const float f = f16_bits_to_f32(static_cast<uint16_t>(h));
    const uint16_t back = f32_to_f16_bits(f);
    if (is_nan16(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_TRUE(is_nan16(back)) << std::hex << h;
      ASSERT_EQ(back & 0x8000u, h & 0x8000u) << "sign of NaN kept";
    } else {
      ASSERT_EQ(back, h) << std::hex << h << " -> " << f;
    }
  }
}

TEST(Fp16, WideningMatchesCompilerFloat16ForEveryPattern) {
#if defined(__FLT16_MANT_DIG__)
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    _Float16 ref;
    std::memcpy(&ref, &bits, 2);
    const float expected = static_cast<float>(ref);
    const float got = f16_bits_to_f32(bits);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(got));
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(expected)) << std::hex << h;
    }
  }
#else
  GTEST_FAIL() << "this compiler has no _Float16; build the tests with GCC >= 12 or clang";
#endif
}

// For each pair of neighbouring finite fp16 values (a, b): values strictly between
// round to the nearer one, the exact midpoint to the one with an even mantissa.
TEST(Fp16, NarrowingRoundsToNearestEvenAroundEveryMidpoint) {
  for (uint32_t h = 0; h < 0x7c00u; ++h) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const uint16_t lo = static_cast<uint16_t>(h | sign);
      const uint16_t hi = static_cast<uint16_t>((h + 1) | sign);  // 0x7c00 is Inf
      const double a = f16_bits_to_f32(lo);
      const double b = h + 1 == 0x7c00u ? (sign ? -65536.0 : 65536.0) : f16_bits_to_f32(hi);
      const float mid = static_cast<float>((a + b) / 2);  // exact: 12 significant bits
      ASSERT_EQ(static_cast<double>(mid), (a + b) / 2);
      const uint16_t even = (h & 1u) ? hi : lo;
      ASSERT_EQ(f32_to_f16_bits(static_cast<float>(a)), lo);
      ASSERT_EQ(f32_to_f16_bits(mid), even) << std::hex << h << " mid " << mid;
      const float toward_b = std::nextafter(mid, static_cast<float>(b) * 2);
      const float toward_a = std::nextafter(mid, static_cast<float>(a) == 0 ? 0.0f : static_cast<float>(a));
      ASSERT_EQ(f32_to_f16_bits(toward_b), hi) << std::hex << h;
      if (mid != 0) {
        ASSERT_EQ(f32_to_f16_bits(toward_a), lo) << std::hex << h;
      }
    }
  }
}

TEST(Fp16, NarrowingMatchesCompilerFloat16OnSpreadOfFloatPatterns) {
#if defined(__FLT16_MANT_DIG__)
  // Every 97th fp32 pattern: ~44 million values over all exponents, signs and NaNs.
  for (uint64_t x = 0; x <= 0xffffffffull; x += 97) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(x));
    const _Float16 ref = static_cast<_Float16>(f);
    uint16_t expected;
    std::memcpy(&expected, &ref, 2);
    const uint16_t got = f32_to_f16_bits(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(is_nan16(got)) << std::hex << x;
    } else {
      ASSERT_EQ(got, expected) << std::hex << x;
    }
  }
#else
  GTEST_FAIL() << "this compiler has no _Float16";
#endif
}

TEST(Fp16, SpecialValues) {
  EXPECT_EQ(f32_to_f16_bits(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65519.99f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00);  // tie rounds to even = Inf
  EXPECT_EQ(f32_to_f16_bits(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: 0
  EXPECT_EQ(f32_to_f16_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp ties to even 2
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  // A NaN whose payload sits only in the low bits must stay NaN (not become Inf).
  EXPECT_TRUE(is_nan16(f32_to_f16_bits(std::bit_cast<float>(0x7f800001u))));
  EXPECT_TRUE(is_nan16(f32_to_f16_bits(std::bit_cast<float>(0xffc00000u))));
}

TEST(BFloat16, WideningThenNarrowingIsIdentityForEveryPattern) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    const float f = bf16_bits_to_f32(static_cast<uint16_t>(h));
    const uint16_t back = f32_to_bf16_bits(f);
    if (is_nan_bf16(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f));
      ASSERT_TRUE(is_nan_bf16(back));
    } else {
      ASSERT_EQ(back, h) << std::hex << h;
      ASSERT_EQ(std::bit_cast<uint32_t>(f), h << 16);  // widening is a shift
    }
  }
}

TEST(BFloat16, NarrowingRoundsToNearestEvenAroundEveryMidpoint) {
  for (uint32_t h = 0; h < 0x7f80u; ++h) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const uint16_t lo = static_cast<uint16_t>(h | sign);
      const uint16_t hi = static_cast<uint16_t>((h + 1) | sign);
      // Midpoint pattern: lo's bits followed by a single 1 bit below bf16 precision.
      const uint32_t mid_bits = (static_cast<uint32_t>(lo) << 16) | 0x8000u;
      const float mid = std::bit_cast<float>(mid_bits);
      const uint16_t even = (h & 1u) ? hi : lo;
      ASSERT_EQ(f32_to_bf16_bits(mid), even) << std::hex << h;
      ASSERT_EQ(f32_to_bf16_bits(std::bit_cast<float>(mid_bits + 1)), hi) << std::hex << h;
      ASSERT_EQ(f32_to_bf16_bits(std::bit_cast<float>(mid_bits - 1)), lo) << std::hex << h;
    }
  }
}

TEST(BFloat16, SpecialValues) {
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(f32_to_bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to Inf
  EXPECT_TRUE(is_nan_bf16(f32_to_bf16_bits(std::bit_cast<float>(0x7f800001u))));
  EXPECT_TRUE(is_nan_bf16(f32_to_bf16_bits(std::bit_cast<float>(0xff800001u))));
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3f80);
}

TEST(DType, NamesParseAndSizes) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32, DType::kI64, DType::kU8}) {
    auto parsed = dtype_parse(dtype_name(d));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(dtype_parse("bfloat16"), DType::kBF16);
  EXPECT_EQ(dtype_parse("Float16"), DType::kF16);
  EXPECT_FALSE(dtype_parse("fp8").has_value());
  EXPECT_EQ(dtype_size(DType::kBF16), 2u);
  EXPECT_EQ(dtype_size(DType::kF64), 8u);
}

TEST(DType, ConvertRoundsOnceFromFp32) {
  const float src[4] = {1.0f, 1.0f + 1.0f / 1024 / 2, 3.14159f, -65520.0f};
  uint16_t half[4];
  dtype_convert(src, DType::kF32, half, DType::kF16, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(half[i], f32_to_f16_bits(src[i]));
  double back[4];
  dtype_convert(half, DType::kF16, back, DType::kF64, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back[i], static_cast<double>(f16_bits_to_f32(half[i])));
  EXPECT_THROW(dtype_convert(src, DType::kI32, half, DType::kF16, 1), std::exception);
}

}  // namespace
}  // namespace fk
