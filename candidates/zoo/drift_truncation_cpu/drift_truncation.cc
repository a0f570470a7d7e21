// Test zoo — drift_truncation (CPU): a fused_add_rms_norm that is correct except that
// every store to a 16-bit type (the residual and the output) rounds toward zero
// instead of to nearest. Each call stays within tolerance (errors below 1 ulp), but
// the bias always points toward zero and compounds through the layers of a model.
// fp16 and bf16 only; fp32 returns FK_ERROR_UNSUPPORTED. Expected verdict:
// INCORRECT_NUMERICAL, reason "drifts".
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

// The misbehaviour: 16-bit stores truncate (round toward zero).
inline uint16_t f32_to_f16_toward_zero(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
  if (a == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);                        // Inf
  if (a >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7bffu);                    // >= 65536: the largest finite
  if (a >= 0x38800000u) return static_cast<uint16_t>(sign | ((a - 0x38000000u) >> 13));  // normal: drop 13 bits
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(float_of(a) * 0x1p24f));     // subnormal: floor
}
inline uint16_t f32_to_bf16_toward_zero(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN
  return static_cast<uint16_t>(u >> 16);
}
struct F16TowardZero {
  using T = uint16_t;
  static float load(uint16_t v) { return f16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_f16_toward_zero(v); }
};
struct BF16TowardZero {
  using T = uint16_t;
  static float load(uint16_t v) { return bf16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_bf16_toward_zero(v); }
};

template <typename E>
void fused_add_rms_norm_rows(typename E::T* x, typename E::T* res, const typename E::T* w, int64_t rows, int64_t h,
                             float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    float ss = 0.0f;
    for (int64_t i = 0; i < h; ++i) {
      res[r * h + i] = E::store(E::load(x[r * h + i]) + E::load(res[r * h + i]));
      const float v = E::load(res[r * h + i]);
      ss += v * v;
    }
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t i = 0; i < h; ++i) x[r * h + i] = E::store(E::load(res[r * h + i]) * inv * E::load(w[i]));
  }
}

}  // namespace

extern "C" int fk_candidate_fused_add_rms_norm(const fk_context* ctx, fk_t input, fk_t residual, fk_t weight,
                                               double epsilon) {
  if (ctx == nullptr || input == nullptr || residual == nullptr || weight == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != FK_DEVICE_CPU)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "fused_add_rms_norm: this candidate runs on the CPU");
  if (input->ndim < 1 || input->ndim > FK_MAX_DIMS || !same_shape(residual, input) || weight->ndim != 1 ||
      weight->shape[0] != input->shape[input->ndim - 1])
    return fail(ctx, FK_ERROR_INVALID, "fused_add_rms_norm: expected input and residual [..., H] and weight [H]");
  if (residual->dtype != input->dtype || weight->dtype != input->dtype ||
      (input->dtype != FK_DTYPE_F16 && input->dtype != FK_DTYPE_BF16))
    return fail(ctx, FK_ERROR_UNSUPPORTED, "fused_add_rms_norm: this candidate handles fp16 and bf16 only");
  const int64_t h = input->shape[input->ndim - 1], n = numel(input);
  if (n == 0) return FK_OK;
  auto* x = static_cast<uint16_t*>(input->data);
  auto* res = static_cast<uint16_t*>(residual->data);
  const auto* w = static_cast<const uint16_t*>(weight->data);
  const float eps = static_cast<float>(epsilon);
  if (input->dtype == FK_DTYPE_F16)
    fused_add_rms_norm_rows<F16TowardZero>(x, res, w, n / h, h, eps);
  else
    fused_add_rms_norm_rows<BF16TowardZero>(x, res, w, n / h, h, eps);
  return FK_OK;
}

static_assert(std::is_same_v<decltype(&fk_candidate_fused_add_rms_norm), fk_fused_add_rms_norm_fn>,
              "signature of fused_add_rms_norm");
