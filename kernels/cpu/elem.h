// Element access for CPU kernels: load any float element type as float (or double)
// and store back with one rounding. dispatch_float calls f(T{}) with the C++ type of
// a float dtype, so a kernel is written once as a template.
#pragma once

#include "core/dtype.h"
#include "core/error.h"

namespace fk::kernels::cpu {

inline float load(float v) { return v; }
inline float load(Half v) { return static_cast<float>(v); }
inline float load(BFloat16 v) { return static_cast<float>(v); }
inline double load(double v) { return v; }

template <typename T>
inline T store(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(v);
  } else {
    return T(v);
  }
}

// A value computed in A (float in a baseline, double in an fp64 reference) stored as T
// with one rounding; a double reference keeps its double exactly.
template <typename T, typename A>
inline T put(A v) {
  if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(v);
  } else {
    return store<T>(static_cast<float>(v));
  }
}

template <typename F>
void dispatch_float(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32: f(float{}); return;
    case DType::kF16: f(Half{}); return;
    case DType::kBF16: f(BFloat16{}); return;
    default: fail(ErrorKind::kUnsupported, "CPU kernel: dtype {} is not supported", dtype_name(dtype));
  }
}

// Reads element i of an integer tensor's data (int32 or int64) as int64.
inline int64_t load_index(const void* data, DType dtype, int64_t i) {
  if (dtype == DType::kI64) return static_cast<const int64_t*>(data)[i];
  return static_cast<const int32_t*>(data)[i];
}

}  // namespace fk::kernels::cpu
