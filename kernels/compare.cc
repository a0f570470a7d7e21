#include "kernels/compare.h"

#include "core/error.h"
#include "kernels/cpu/elem.h"

#include <algorithm>
#include <cmath>

namespace fk::kernels {

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
  const Tensor g = got.to_dtype(DType::kF64), r = ref.to_dtype(DType::kF64);
  const double *gp = g.data_as<double>(), *rp = r.data_as<double>();
  double num = 0, den = 0;
  int64_t matched = 0, ref_bad = 0;
  for (int64_t i = 0; i < c.elements; ++i) {
    const double x = gp[i], y = rp[i];
    if (!std::isfinite(y)) ++ref_bad;
    if (std::isnan(x)) {
      ++c.nan;
      continue;
    }
    if (std::isinf(x)) {
      ++c.inf;
      continue;
    }
    const double d = std::abs(x - y);
    num += d * d;
    den += y * y;
    c.max_abs = std::max(c.max_abs, d);
    if (d <= tol.atol + tol.rtol * std::abs(y)) ++matched;
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
