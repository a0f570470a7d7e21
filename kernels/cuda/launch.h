// Launchers of the CUDA baseline kernels with plain arguments (C++17, no fk headers),
// so .cu files compile with nvcc's C++17 while host code stays C++20. Each enqueues
// work on `stream` and returns the launch status; none synchronises.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// Element type codes shared with the host side (mirror fk::DType's float members).
enum class Elem : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

cudaError_t rms_norm(void* out, const void* x, const void* weight, Elem elem, int64_t tokens, int64_t hidden,
                     float eps, cudaStream_t stream);

}  // namespace fk::cuda::launch
