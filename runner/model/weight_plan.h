// How a family lays out one rank's weights, shared by every family's weights.cc: a
// Planned tensor is its shape and the blocks of global source tensors (WeightPiece,
// weight_source.h) that fill it; a WeightMaker turns a plan into a tensor, the same
// plan giving the same values on every backend:
//   no source:          a placeholder (allocated, never written; the shape pass);
//   a source, no backend: fp32 on the host, block by block (the master weights);
//   a source and backend: in `dtype` on the backend, each block written in place
//                       (random blocks drawn there), never a whole host copy.
// Elements no block covers are `fill`: zero (a padded vocab block, a bias no checkpoint
// has) or another constant (the unit weight of a norm without a learned one).
#pragma once

#include "core/tensor.h"
#include "core/spec/architecture.h"
#include "kernels/backend.h"
#include "runner/model/placement.h"
#include "runner/model/weight_source.h"

#include <string>
#include <vector>

namespace fk::runner {

struct Planned {
  Shape shape;
  std::vector<WeightPiece> pieces;
  float fill = 0;  // the value of elements no piece covers
  int64_t numel() const { return shape_numel(shape); }
};

// Rows [r0, r0 + nr) x columns [c0, c0 + nc) of the global [rows_total, cols_total]
// tensor `name`, drawn (by a random source) from [lo, hi), plus `add`.
Planned plan_block(const std::string& name, int64_t rows_total, int64_t cols_total, int64_t r0, int64_t nr, int64_t c0,
                   int64_t nc, float lo, float hi, float add = 0);
// Elements [begin, begin + count) of the global vector `name` of `total` elements.
Planned plan_vector(const std::string& name, int64_t total, int64_t begin, int64_t count, float lo, float hi,
                    float add = 0);
// Parts laid end to end, as a tensor of `shape`.
Planned plan_concat(const std::vector<Planned>& parts, Shape shape);
// Matrices stacked by rows; vectors end to end.
Planned plan_concat_rows(const std::vector<Planned>& parts);
Planned plan_concat_vectors(const std::vector<Planned>& parts);

// `pl`'s block of the vocab-parallel [vocab_size, hidden_size] tensor `name` (an
// embedding or LM head): rows [vocab_begin, vocab_begin + vocab_block), zero past the
// vocabulary; drawn from U(-bound, bound).
Planned plan_vocab_block(const spec::Architecture& a, const Placement& pl, const std::string& name, float bound);

// `pl`'s block of the vocab-parallel vector `name` of vocab_size elements (an LM
// head's bias): [vocab_block], zero past the vocabulary; drawn from U(lo, hi).
Planned plan_vocab_vector(const spec::Architecture& a, const Placement& pl, const std::string& name, float lo, float hi);

// The bound of a linear weight's U(-a, a): a = sqrt(3 / fan_in) (unit-variance preserving).
float linear_bound(int64_t fan_in);

struct WeightMaker {
  const WeightSource* src = nullptr;
  kernels::Backend* backend = nullptr;
  DType dtype = DType::kF32;

  // The tensor of `p` (see above).
  Tensor operator()(const Planned& p) const;
  // The tensor of `p` in fp32 whatever `dtype` is (a family's fp32 parameters, such as
  // Mamba's A and D), with `transform` applied to every value on the host first when
  // given (A = -exp(A_log)); small tensors only: its values pass through the host.
  Tensor fp32(const Planned& p, float (*transform)(float) = nullptr) const;
  // The tensor of `p` in fp32 storage holding values of `dtype` (rounded to it) on a
  // backend, and the fp32 master's on the host: a parameter an op takes in fp32 whatever
  // the workload's dtype (attention sinks), rounded as a checkpoint of that dtype holds it.
  Tensor fp32_in_dtype(const Planned& p) const;
  // The dtype a family's weights are in once made: fp32 for the host master, else `dtype`.
  DType made_dtype() const { return src != nullptr && backend == nullptr ? DType::kF32 : dtype; }
};

}  // namespace fk::runner
