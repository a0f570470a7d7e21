// Verifiable data for the bandwidth probe (and tests): element values that are small
// integers chosen by a hash of (seed, rank, index), so every collective's result is
// known exactly and every partial sum is representable in the element type.
//
// Data movement uses values in [-100, 100] ([0, 100] for uint8), exact in every dtype.
// Sums use values in [-2, 2] and, where n ranks could push a sum past the largest run
// of exactly representable integers (256 for bf16, 2048 for fp16, 2^24 for fp32), only
// every k-th rank contributes a non-zero value to an element, so |sum| <= that limit.
// Internal to collectives/ (tests use it too).
#pragma once

#include "collectives/communicator.h"

#include <cstddef>
#include <cstdint>

namespace fk::collectives {

struct ProbePattern {
  uint64_t seed = 0;
  int ranks = 1;
  DType dtype = DType::kF32;
  bool reduced = false;  // values feed a reduction
  ReduceOp op = ReduceOp::kSum;

  // The value `rank` contributes at `index`.
  double value(int rank, size_t index) const;
  // The reduction over all ranks of value(q, index).
  double reduced_value(size_t index) const;
};

// Element access by dtype (fp16/bf16 round to nearest even; exact for the pattern).
void probe_store(DType dtype, void* base, size_t index, double value);
double probe_load(DType dtype, const void* base, size_t index);
// Fills n elements with a value the pattern never produces (NaN for floats).
void probe_poison(DType dtype, void* base, size_t n);

}  // namespace fk::collectives
