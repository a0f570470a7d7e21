// Launcher of the CUDA activation baselines (plain arguments; see elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// silu(x) = x / (1 + e^-x); gelu exact (erf); gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi)
// (x + 0.044715 x^3))); relu(x) = x > 0 ? x : 0; relu2(x) = relu(x)^2.
enum class Activation : int { kSilu = 0, kGelu = 1, kGeluTanh = 2, kRelu = 3, kRelu2 = 4 };

// gated: out[r, i] = act(in[r, i]) * in[r, d + i] with out [rows, d], in [rows, 2d];
// plain: out[r, i] = act(in[r, i]) with both [rows, d]. Contiguous; no-op when empty.
cudaError_t activation(void* out, const void* in, Elem elem, Activation act, bool gated, int64_t rows, int64_t d,
                       cudaStream_t stream);

}  // namespace fk::cuda::launch
