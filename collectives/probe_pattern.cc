#include "collectives/probe_pattern.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace fk::collectives {

namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Largest integer magnitude up to which every integer is exact in `dtype`.
double exact_integer_limit(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
      return 256.0;
    case DType::kF16:
      return 2048.0;
    case DType::kF32:
      return 16777216.0;
    default:
      return 9007199254740992.0;  // fp64 and the integer types
  }
}

// Every `stride`-th rank (by rank + index) contributes to a sum. At most
// ceil(ranks / stride) <= (limit - 4) / 2 + 1 ranks contribute values of magnitude <= 2,
// so every partial sum stays within limit - 2.
size_t sum_stride(DType dtype, int ranks) {
  const double worst = 2.0 * ranks;
  const double limit = exact_integer_limit(dtype);
  return worst <= limit - 4 ? 1 : static_cast<size_t>(std::ceil(worst / (limit - 4)));
}

}  // namespace

double ProbePattern::value(int rank, size_t index) const {
  const uint64_t h = mix(seed * 0x100000001B3ull ^ mix(static_cast<uint64_t>(rank) << 40 ^ index));
  if (!reduced) {
    if (dtype == DType::kU8) return static_cast<double>(h % 101);
    return static_cast<double>(static_cast<int64_t>(h % 201) - 100);
  }
  if (op == ReduceOp::kSum) {
    const size_t stride = sum_stride(dtype, ranks);
    if (stride > 1 && (static_cast<size_t>(rank) + index) % stride != 0) return 0.0;
  }
  return static_cast<double>(static_cast<int64_t>(h % 5) - 2);
}

double ProbePattern::reduced_value(size_t index) const {
  double acc = value(0, index);
  for (int q = 1; q < ranks; ++q) {
    const double v = value(q, index);
    acc = op == ReduceOp::kSum ? acc + v : std::max(acc, v);
  }
  return acc;
}

void probe_store(DType dtype, void* base, size_t index, double value) {
  switch (dtype) {
    case DType::kF32:
      static_cast<float*>(base)[index] = static_cast<float>(value);
      return;
    case DType::kF64:
      static_cast<double*>(base)[index] = value;
      return;
    case DType::kF16:
      static_cast<Half*>(base)[index] = Half(static_cast<float>(value));
      return;
    case DType::kBF16:
      static_cast<BFloat16*>(base)[index] = BFloat16(static_cast<float>(value));
      return;
    case DType::kI32:
      static_cast<int32_t*>(base)[index] = static_cast<int32_t>(value);
      return;
    case DType::kI64:
      static_cast<int64_t*>(base)[index] = static_cast<int64_t>(value);
      return;
    case DType::kU8:
      static_cast<uint8_t*>(base)[index] = static_cast<uint8_t>(value);
      return;
  }
  fail(ErrorKind::kInternal, "probe_store: unknown dtype");
}

double probe_load(DType dtype, const void* base, size_t index) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(base)[index];
    case DType::kF64:
      return static_cast<const double*>(base)[index];
    case DType::kF16:
      return static_cast<float>(static_cast<const Half*>(base)[index]);
    case DType::kBF16:
      return static_cast<float>(static_cast<const BFloat16*>(base)[index]);
    case DType::kI32:
      return static_cast<double>(static_cast<const int32_t*>(base)[index]);
    case DType::kI64:
      return static_cast<double>(static_cast<const int64_t*>(base)[index]);
    case DType::kU8:
      return static_cast<const uint8_t*>(base)[index];
  }
  fail(ErrorKind::kInternal, "probe_load: unknown dtype");
}

void probe_poison(DType dtype, void* base, size_t n) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kI32:
      case DType::kI64:
        probe_store(dtype, base, i, 1 << 30);
        break;
      case DType::kU8:
        probe_store(dtype, base, i, 255);
        break;
      default:
        probe_store(dtype, base, i, nan);
        break;
    }
  }
}

}  // namespace fk::collectives
