// Element types and their conversions.
//
// fp16 (IEEE binary16) and bf16 (bfloat16) are stored as 16-bit patterns in the
// Half and BFloat16 value types. Conversions from fp32 round to nearest, ties to
// even; overflow gives Inf; NaN stays NaN (quieted, sign and top payload bits kept);
// subnormals are produced and consumed exactly. Widening conversions are exact.
// Every pattern of both 16-bit formats is covered by tests/core/dtype_test.cc.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace fk {

enum class DType : uint8_t { kF32, kF16, kBF16, kF64, kI32, kI64, kU8 };

// Size of one element in bytes.
size_t dtype_size(DType dtype);
// Canonical short name: "fp32", "fp16", "bf16", "fp64", "int32", "int64", "uint8".
std::string_view dtype_name(DType dtype);
// Parses a canonical name or a common alias ("float32", "bfloat16", "half", ...).
std::optional<DType> dtype_parse(std::string_view name);
bool dtype_is_float(DType dtype);

uint16_t f32_to_f16_bits(float value);
float f16_bits_to_f32(uint16_t bits);
uint16_t f32_to_bf16_bits(float value);
inline float bf16_bits_to_f32(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float value) : bits(f32_to_f16_bits(value)) {}
  static Half from_bits(uint16_t b) { Half h; h.bits = b; return h; }
  explicit operator float() const { return f16_bits_to_f32(bits); }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value) : bits(f32_to_bf16_bits(value)) {}
  static BFloat16 from_bits(uint16_t b) { BFloat16 h; h.bits = b; return h; }
  explicit operator float() const { return bf16_bits_to_f32(bits); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

// Converts n elements between floating types (fp32, fp16, bf16, fp64). Element
// buffers must not overlap. Throws fk::Error for non-float types.
void dtype_convert(const void* src, DType src_type, void* dst, DType dst_type, size_t n);

// Rounds fp32 values in place to the precision of `dtype` (identity for fp32/fp64).
void dtype_round_trip(float* values, size_t n, DType dtype);

}  // namespace fk
