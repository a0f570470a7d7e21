#include "kernels/compare.h"

#include "core/error.h"
#include "kernels/cpu/elem.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fk::kernels {
namespace {

constexpr int64_t kCompareBlock = int64_t{1} << 16;

struct Partial {
  double num = 0, den = 0, max_abs = 0;
  int64_t matched = 0, ref_bad = 0, nan = 0, inf = 0;
};

}  // namespace

Tensor host_to_f64(const Tensor& t) {
  const Tensor src = t.is_contiguous() ? t : t.contiguous_copy();
  Tensor out = Tensor::empty(DType::kF64, src.shape());
  const int64_t n = src.numel(), blocks = (n + kCompareBlock - 1) / kCompareBlock;
  const auto* sp = static_cast<const unsigned char*>(src.data());
  auto* op = static_cast<double*>(out.data());
  const size_t ss = dtype_size(src.dtype());
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t i0 = blk * kCompareBlock, m = std::min(kCompareBlock, n - i0);
    dtype_convert(sp + static_cast<size_t>(i0) * ss, src.dtype(), op + i0, DType::kF64, static_cast<size_t>(m));
  }
  return out;
}

Comparison compare(const Tensor& got, const Tensor& ref, const Tolerance& tol) {
  if (got.numel() != ref.numel())
    fail(ErrorKind::kInternal, "compare: {} vs reference {}", got.describe(), ref.describe());
  Comparison c;
  c.elements = got.numel();
  if (c.elements == 0) return c;
  if (!dtype_is_float(got.dtype())) {
    const Tensor g = got.contiguous_copy(), r = ref.contiguous_copy();
    int64_t same = 0;
    for (int64_t i = 0; i < c.elements; ++i)
      same += cpu::load_index(g.data(), g.dtype(), i) == cpu::load_index(r.data(), r.dtype(), i);
    c.matched_fraction = static_cast<double>(same) / static_cast<double>(c.elements);
    c.rel_l2 = 1.0 - c.matched_fraction;
    c.max_abs = same == c.elements ? 0 : 1;
    c.passed = c.matched_fraction >= tol.min_matched;
    return c;
  }
  // Fixed blocks of elements, each converted to fp64 on the stack of the thread that
  // takes it; the blocks' sums are added in block order, so the figures do not depend on
  // the thread count. (A full-size output is 10^8 elements: one thread took seconds.)
  const Tensor g = got.is_contiguous() ? got : got.contiguous_copy();
  const Tensor r = ref.is_contiguous() ? ref : ref.contiguous_copy();
  const int64_t blocks = (c.elements + kCompareBlock - 1) / kCompareBlock;
  std::vector<Partial> parts(static_cast<size_t>(blocks));
  const auto* gp = static_cast<const unsigned char*>(g.data());
  const auto* rp = static_cast<const unsigned char*>(r.data());
  const size_t gs = dtype_size(g.dtype()), rs = dtype_size(r.dtype());
#pragma omp parallel if (blocks > 1)  // small outputs (every timed call's check) stay on this thread
  {
    const auto scratch = static_cast<size_t>(std::min(kCompareBlock, c.elements));  // small outputs: small buffers
    std::vector<double> xs(scratch), ys(scratch);
#pragma omp for schedule(dynamic, 4)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t i0 = blk * kCompareBlock, n = std::min(kCompareBlock, c.elements - i0);
      dtype_convert(gp + static_cast<size_t>(i0) * gs, g.dtype(), xs.data(), DType::kF64, static_cast<size_t>(n));
      dtype_convert(rp + static_cast<size_t>(i0) * rs, r.dtype(), ys.data(), DType::kF64, static_cast<size_t>(n));
      Partial& p = parts[static_cast<size_t>(blk)];
      for (int64_t i = 0; i < n; ++i) {
        const double x = xs[static_cast<size_t>(i)], y = ys[static_cast<size_t>(i)];
        if (!std::isfinite(y)) ++p.ref_bad;
        if (std::isnan(x)) {
          ++p.nan;
          continue;
        }
        if (std::isinf(x)) {
          ++p.inf;
          continue;
        }
        const double d = std::abs(x - y);
        p.num += d * d;
        p.den += y * y;
        p.max_abs = std::max(p.max_abs, d);
        if (d <= tol.atol + tol.rtol * std::abs(y)) ++p.matched;
      }
    }
  }
  double num = 0, den = 0;
  int64_t matched = 0, ref_bad = 0;
  for (const Partial& p : parts) {
    num += p.num;
    den += p.den;
    c.max_abs = std::max(c.max_abs, p.max_abs);
    matched += p.matched;
    ref_bad += p.ref_bad;
    c.nan += p.nan;
    c.inf += p.inf;
  }
  c.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  c.matched_fraction = static_cast<double>(matched) / static_cast<double>(c.elements);
  c.passed = c.matched_fraction >= tol.min_matched && (c.nan + c.inf == 0 || ref_bad > 0);
  return c;
}

Comparison combine(const Comparison& a, const Comparison& b) {
  Comparison c;
  c.rel_l2 = std::max(a.rel_l2, b.rel_l2);
  c.max_abs = std::max(a.max_abs, b.max_abs);
  c.matched_fraction = std::min(a.matched_fraction, b.matched_fraction);
  c.nan = a.nan + b.nan;
  c.inf = a.inf + b.inf;
  c.elements = a.elements + b.elements;
  c.passed = a.passed && b.passed;
  return c;
}

double relative_l2(const Tensor& got, const Tensor& ref) {
  return compare(got, ref, Tolerance{}).rel_l2;
}

}  // namespace fk::kernels
