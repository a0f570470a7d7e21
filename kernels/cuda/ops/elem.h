// Element type codes shared by the CUDA launchers (nvcc, C++17) and their C++20 host
// side; they mirror fk::DType's float members. Index tensors are always int64.
#pragma once

namespace fk::cuda::launch {

enum class Elem : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

// fk::dtype_name's spelling ("fp32", "fp16", "bf16"), for messages and listings.
inline const char* elem_name(Elem e) { return e == Elem::kF32 ? "fp32" : e == Elem::kF16 ? "fp16" : "bf16"; }

}  // namespace fk::cuda::launch
