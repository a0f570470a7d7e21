// compare() and host_to_f64() over outputs of several of compare's blocks: the figures
// are the definition's (relative L2, max abs, matched fraction, NaN/Inf counts) and do
// not depend on the number of host threads.
#include "kernels/compare.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace fk::kernels {
namespace {

struct Restore {
  int threads = omp_get_max_threads();
  ~Restore() { omp_set_num_threads(threads); }
};

// got: bf16 values near ref, a few far off, one NaN and one Inf (in different blocks
// when n > 2 * 65536).
std::pair<Tensor, Tensor> sample(int64_t n) {
  Tensor ref = Tensor::empty(DType::kF64, {n});
  Tensor f32 = Tensor::empty(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i) {
    const double y = std::sin(0.001 * static_cast<double>(i)) * 3.0;
    ref.data_as<double>()[i] = y;
    f32.data_as<float>()[i] = static_cast<float>(i % 997 == 0 ? y + 0.5 : y * (1.0 + 1e-3));
  }
  f32.data_as<float>()[n / 3] = std::numeric_limits<float>::quiet_NaN();
  f32.data_as<float>()[2 * n / 3 + 1] = std::numeric_limits<float>::infinity();
  return {f32.to_dtype(DType::kBF16), ref};
}

TEST(Compare, FiguresAreTheDefinitionsAtAnyThreadCount) {
  Restore restore;
  const int64_t n = 200003;  // three full blocks of 65536 and a tail
  const auto [got, ref] = sample(n);
  const Tolerance tol{1e-2, 1e-2, 0.99};
  // The definition, one element after the other.
  const Tensor g64 = got.to_dtype(DType::kF64);
  double num = 0, den = 0, max_abs = 0;
  int64_t matched = 0, nan = 0, inf = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = g64.data_as<double>()[i], y = ref.data_as<double>()[i];
    if (std::isnan(x)) {
      ++nan;
      continue;
    }
    if (std::isinf(x)) {
      ++inf;
      continue;
    }
    num += (x - y) * (x - y);
    den += y * y;
    max_abs = std::max(max_abs, std::abs(x - y));
    matched += std::abs(x - y) <= tol.atol + tol.rtol * std::abs(y);
  }
  omp_set_num_threads(1);
  const Comparison one = compare(got, ref, tol);
  omp_set_num_threads(3);
  const Comparison three = compare(got, ref, tol);
  for (const Comparison& c : {one, three}) {
    EXPECT_EQ(c.elements, n);
    EXPECT_EQ(c.nan, 1);
    EXPECT_EQ(c.inf, 1);
    EXPECT_EQ(c.nan, nan);
    EXPECT_EQ(c.inf, inf);
    EXPECT_EQ(c.max_abs, max_abs);
    EXPECT_DOUBLE_EQ(c.matched_fraction, static_cast<double>(matched) / static_cast<double>(n));
    EXPECT_NEAR(c.rel_l2, std::sqrt(num / den), 1e-12 * std::sqrt(num / den));
    EXPECT_FALSE(c.passed);  // a NaN where the reference is finite
  }
  // Bit for bit the same figures on 1 and 3 threads.
  EXPECT_EQ(std::memcmp(&one.rel_l2, &three.rel_l2, sizeof(double)), 0);
  EXPECT_EQ(one.matched_fraction, three.matched_fraction);
}

TEST(Compare, HostToF64IsToDtypeOnEveryThread) {
  Restore restore;
  const auto [got, ref] = sample(131073);
  (void)ref;
  omp_set_num_threads(3);
  const Tensor a = host_to_f64(got), b = got.to_dtype(DType::kF64);
  ASSERT_EQ(a.dtype(), DType::kF64);
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), b.nbytes()), 0);
  // A non-contiguous view (columns 1..2 of a 3 x 5 matrix) is converted in logical order.
  const Tensor m = Tensor::empty(DType::kF32, {3, 5});
  for (int i = 0; i < 15; ++i) m.data_as<float>()[i] = static_cast<float>(i);
  const Tensor v = m.slice(1, 1, 2);
  ASSERT_FALSE(v.is_contiguous());
  const Tensor c = host_to_f64(v);
  ASSERT_EQ(c.numel(), 6);
  EXPECT_EQ(c.data_as<double>()[0], 1.0);
  EXPECT_EQ(c.data_as<double>()[2], 6.0);  // v[1][0] = m[1][1]
  EXPECT_EQ(c.data_as<double>()[5], 12.0);
}

}  // namespace
}  // namespace fk::kernels
