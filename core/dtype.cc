#include "core/dtype.h"

#include "core/error.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace fk {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kF64: return 8;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kU8: return 1;
  }
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "fp32";
    case DType::kF16: return "fp16";
    case DType::kBF16: return "bf16";
    case DType::kF64: return "fp64";
    case DType::kI32: return "int32";
    case DType::kI64: return "int64";
    case DType::kU8: return "uint8";
  }
  return "?";
}

std::optional<DType> dtype_parse(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "fp32" || s == "float32" || s == "float" || s == "f32") return DType::kF32;
  if (s == "fp16" || s == "float16" || s == "half" || s == "f16") return DType::kF16;
  if (s == "bf16" || s == "bfloat16") return DType::kBF16;
  if (s == "fp64" || s == "float64" || s == "double" || s == "f64") return DType::kF64;
  if (s == "int32" || s == "i32") return DType::kI32;
  if (s == "int64" || s == "i64") return DType::kI64;
  if (s == "uint8" || s == "u8") return DType::kU8;
  return std::nullopt;
}

bool dtype_is_float(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16 ||
         dtype == DType::kF64;
}

uint16_t f32_to_f16_bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {                       // Inf or NaN
    if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 -> Inf
  if (ax < 0x38800000u) {                        // below 2^-14: fp16 subnormal or zero
    if (ax <= 0x33000000u) return static_cast<uint16_t>(sign);          // <= 2^-25 ties to 0
    const uint32_t exponent = ax >> 23;
    const uint32_t mantissa = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;     // 14..24
    uint32_t r = mantissa >> shift;
    const uint32_t rem = mantissa & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    exponent = 1;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    mantissa &= 0x3ffu;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t f32_to_bf16_bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

namespace {

template <typename Src>
double load_as_double(const void* p, size_t i) {
  const Src* s = static_cast<const Src*>(p);
  if constexpr (std::is_same_v<Src, Half> || std::is_same_v<Src, BFloat16>) {
    return static_cast<double>(static_cast<float>(s[i]));
  } else {
    return static_cast<double>(s[i]);
  }
}

template <typename Dst>
void store_from(void* p, size_t i, double v) {
  Dst* d = static_cast<Dst*>(p);
  if constexpr (std::is_same_v<Dst, Half> || std::is_same_v<Dst, BFloat16>) {
    // fp64 -> fp32 -> 16-bit double-rounds only for fp64 sources; fp32 sources are exact.
    d[i] = Dst(static_cast<float>(v));
  } else {
    d[i] = static_cast<Dst>(v);
  }
}

template <typename Src, typename Dst>
void convert_loop(const void* src, void* dst, size_t n) {
  if constexpr (std::is_same_v<Src, float> &&
                (std::is_same_v<Dst, Half> || std::is_same_v<Dst, BFloat16>)) {
    const float* s = static_cast<const float*>(src);
    Dst* d = static_cast<Dst*>(dst);
    for (size_t i = 0; i < n; ++i) d[i] = Dst(s[i]);
  } else {
    for (size_t i = 0; i < n; ++i) store_from<Dst>(dst, i, load_as_double<Src>(src, i));
  }
}

template <typename Src>
void convert_to(const void* src, void* dst, DType dst_type, size_t n) {
  switch (dst_type) {
    case DType::kF32: return convert_loop<Src, float>(src, dst, n);
    case DType::kF16: return convert_loop<Src, Half>(src, dst, n);
    case DType::kBF16: return convert_loop<Src, BFloat16>(src, dst, n);
    case DType::kF64: return convert_loop<Src, double>(src, dst, n);
    default: fail(ErrorKind::kUnsupported, "dtype_convert: target {} is not a float type",
                  dtype_name(dst_type));
  }
}

}  // namespace

void dtype_convert(const void* src, DType src_type, void* dst, DType dst_type, size_t n) {
  switch (src_type) {
    case DType::kF32: return convert_to<float>(src, dst, dst_type, n);
    case DType::kF16: return convert_to<Half>(src, dst, dst_type, n);
    case DType::kBF16: return convert_to<BFloat16>(src, dst, dst_type, n);
    case DType::kF64: return convert_to<double>(src, dst, dst_type, n);
    default: fail(ErrorKind::kUnsupported, "dtype_convert: source {} is not a float type",
                  dtype_name(src_type));
  }
}

void dtype_round_trip(float* values, size_t n, DType dtype) {
  if (dtype == DType::kF16) {
    for (size_t i = 0; i < n; ++i) values[i] = f16_bits_to_f32(f32_to_f16_bits(values[i]));
  } else if (dtype == DType::kBF16) {
    for (size_t i = 0; i < n; ++i) values[i] = bf16_bits_to_f32(f32_to_bf16_bits(values[i]));
  }
}

}  // namespace fk
