// Test zoo — half_written (CPU): a correct silu_and_mul that writes only the first
// half of the rows (rows / 2 of them) and leaves the rest of out as it found it.
// Expected verdict: INCORRECT_NUMERICAL, reason "not written".
#include "fk_kernel.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

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

// 0 when out [..., d] and input [..., 2d] share one float dtype; else the code.
inline int check_silu_and_mul(const fk_context* ctx, fk_t out, fk_t input, int32_t device) {
  if (ctx == nullptr || out == nullptr || input == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != device) return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: wrong device for this candidate");
  bool ok = out->ndim >= 1 && out->ndim <= FK_MAX_DIMS && input->ndim == out->ndim &&
            input->shape[input->ndim - 1] == 2 * out->shape[out->ndim - 1];
  for (int32_t k = 0; ok && k + 1 < out->ndim; ++k) ok = input->shape[k] == out->shape[k];
  if (!ok) return fail(ctx, FK_ERROR_INVALID, "silu_and_mul: expected out [..., d] and input [..., 2d]");
  if (out->dtype != input->dtype ||
      (out->dtype != FK_DTYPE_F32 && out->dtype != FK_DTYPE_F16 && out->dtype != FK_DTYPE_BF16))
    return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: dtype must be fp32, fp16 or bf16, the same for both");
  return FK_OK;
}

// A correct single-threaded silu_and_mul over rows [0, rows).
template <typename E>
void silu_and_mul_rows(typename E::T* out, const typename E::T* x, int64_t rows, int64_t d) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < d; ++i) {
      const float g = E::load(x[r * 2 * d + i]);
      out[r * d + i] = E::store(g / (1.0f + std::exp(-g)) * E::load(x[r * 2 * d + d + i]));
    }
}

void silu_and_mul_any(int32_t dtype, void* out, const void* x, int64_t rows, int64_t d) {
  switch (dtype) {
    case FK_DTYPE_F32:
      silu_and_mul_rows<F32>(static_cast<float*>(out), static_cast<const float*>(x), rows, d);
      break;
    case FK_DTYPE_F16:
      silu_and_mul_rows<F16>(static_cast<uint16_t*>(out), static_cast<const uint16_t*>(x), rows, d);
      break;
    default:
      silu_and_mul_rows<BF16>(static_cast<uint16_t*>(out), static_cast<const uint16_t*>(x), rows, d);
      break;
  }
}

}  // namespace

extern "C" int fk_candidate_silu_and_mul(const fk_context* ctx, fk_t out, fk_t input) {
  const int rc = check_silu_and_mul(ctx, out, input, FK_DEVICE_CPU);
  if (rc != FK_OK) return rc;
  const int64_t d = out->shape[out->ndim - 1], n = numel(out);
  if (n == 0) return FK_OK;
  // The misbehaviour: rows [rows / 2, rows) are never written.
  silu_and_mul_any(out->dtype, out->data, input->data, (n / d) / 2, d);
  return FK_OK;
}

static_assert(std::is_same_v<decltype(&fk_candidate_silu_and_mul), fk_act_and_mul_fn>, "signature of silu_and_mul");
