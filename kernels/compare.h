// Comparing an implementation's output with a reference.
//
// For float outputs: relative L2 error ||got - ref|| / ||ref||, max absolute error,
// the fraction of elements within atol + rtol * |ref|, NaN and Inf counts. Integer
// outputs (ids) count exact matches. `passed` applies the tolerance's min_matched rule
// and rejects any NaN/Inf where the reference is finite.
#pragma once

#include "core/tensor.h"
#include "kernels/op.h"

namespace fk::kernels {

struct Comparison {
  double rel_l2 = 0;
  double max_abs = 0;
  double matched_fraction = 1;
  int64_t nan = 0;
  int64_t inf = 0;
  int64_t elements = 0;
  bool passed = true;
};

// `got` is a float tensor of any float dtype (or an integer tensor), `ref` the fp64
// (or integer) reference of the same shape.
Comparison compare(const Tensor& got, const Tensor& ref, const Tolerance& tol);
// Merges per-output comparisons into one (worst of each figure).
Comparison combine(const Comparison& a, const Comparison& b);
// `t` (a host float tensor of any float dtype) as a contiguous fp64 tensor, converted
// by every host thread (the same values as t.to_dtype(DType::kF64)).
Tensor host_to_f64(const Tensor& t);
// Relative L2 distance of two float tensors of any dtypes (same element count).
double relative_l2(const Tensor& got, const Tensor& ref);

}  // namespace fk::kernels
