// fk_kernel_util.h: optional helpers for CPU candidate kernels (C++17, header only),
// on the candidate build's include path beside fk_kernel.h. A candidate that includes
// it still builds into one shared library from its own folder; the build cache key
// covers this header too.
//
//   - fp16/bf16 as raw 16-bit patterns, converted with round-to-nearest-even (NaN stays
//     NaN), written with masks so loops over them vectorise;
//   - element traits F32, F16, BF16: the stored type T, load to float, store rounding once;
//   - for_rows: split rows over at most ctx->num_threads std::threads, all joined;
//   - fail (set ctx->error, return a code), numel, same_shape.
#ifndef FK_KERNEL_UTIL_H
#define FK_KERNEL_UTIL_H

#include "fk_kernel.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace fk_util {

// ---- 16-bit element patterns ------------------------------------------------------

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// bf16 is the upper half of an fp32 pattern.
inline float bf16_to_f32(uint16_t b) { return float_of(static_cast<uint32_t>(b) << 16); }
inline uint16_t f32_to_bf16(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN stays a (quiet) NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);                  // nearest, ties to even
}

// fp16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Both directions pick between
// cases with bit masks rather than branches, so that loops over them vectorise.
inline uint32_t mask_if(bool c) { return 0u - static_cast<uint32_t>(c); }  // all ones when c
inline uint32_t pick(uint32_t mask, uint32_t yes, uint32_t no) { return (yes & mask) | (no & ~mask); }

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t t = static_cast<uint32_t>(h & 0x7fffu) << 13;  // exponent and mantissa in fp32 position
  // Scaling by 2^(127-15) rebiases the exponent; it is exact for subnormals too.
  const uint32_t finite = bits_of(float_of(t) * 0x1p112f);
  return float_of(sign | pick(mask_if((h & 0x7c00u) == 0x7c00u), t | 0x7f800000u, finite));  // Inf, NaN
}
inline uint16_t f32_to_f16(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  // Normal results: round the 13 dropped bits to nearest even, then rebias 127 -> 15.
  const uint32_t normal = (a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
  // Below 2^-14 results are subnormal (steps of 2^-24). Adding 0.5 puts the value in
  // [0.5, 1), whose fp32 spacing is also 2^-24, so the fp32 adder rounds it to nearest
  // even; the mantissa bits above 0.5 are the fp16 pattern (0x400 is 2^-14).
  const uint32_t subnormal = bits_of(float_of(a) + 0.5f) - 0x3f000000u;
  uint32_t r = pick(mask_if(a < 0x38800000u), subnormal, normal);
  r = pick(mask_if(a >= 0x477ff000u), 0x7c00u, r);                        // >= 65520 rounds to Inf
  r = pick(mask_if(a > 0x7f800000u), 0x7e00u | ((a >> 13) & 0x3ffu), r);  // NaN stays a (quiet) NaN
  return static_cast<uint16_t>(sign | r);
}

// Element types: the stored type T, load to float, round once back.
struct F32 {
  using T = float;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};
struct F16 {
  using T = uint16_t;
  static float load(uint16_t v) { return f16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_f16(v); }
};
struct BF16 {
  using T = uint16_t;
  static float load(uint16_t v) { return bf16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_bf16(v); }
};

// ---- threads ----------------------------------------------------------------------

// Calls body(begin, end) on contiguous row ranges covering [0, rows), on at most
// max_threads threads (the caller's included). Problems too small to repay starting
// threads (some 30 us each) stay on the calling thread. Every thread is joined before
// returning; a thread that cannot be started has its range run here. body must not
// throw.
template <typename Body>
void for_rows(int32_t max_threads, int64_t rows, int64_t elems_per_row, const Body& body) {
  constexpr int64_t kMinElemsPerThread = 1 << 18;  // ~0.3 ms of work: 10x a thread start
  const int64_t n = std::min<int64_t>({max_threads, rows, rows * elems_per_row / kMinElemsPerThread});
  if (n <= 1) {
    body(0, rows);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(n - 1));
  int64_t started = 1;
  try {
    for (; started < n; ++started) pool.emplace_back(body, rows * started / n, rows * (started + 1) / n);
  } catch (...) {
  }
  for (int64_t k = started; k < n; ++k) body(rows * k / n, rows * (k + 1) / n);
  body(0, rows / n);
  for (auto& t : pool) t.join();
}

// ---- arguments ----------------------------------------------------------------------

inline int fail(const fk_context* ctx, int code, const char* message) {
  if (ctx != nullptr && ctx->error != nullptr && ctx->error_capacity > 0)
    std::snprintf(ctx->error, static_cast<size_t>(ctx->error_capacity), "%s", message);
  return code;
}

inline int64_t numel(fk_t t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

inline bool same_shape(fk_t a, fk_t b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; ++d)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

}  // namespace fk_util

#endif  // FK_KERNEL_UTIL_H
