// Launchers of the CUDA elementwise baselines (plain arguments; see elem.h).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// out[i] = a[i] + b[i] for i < n; out may be a or b (in place).
cudaError_t add(void* out, const void* a, const void* b, Elem elem, int64_t n, cudaStream_t stream);
// x[i] = x[i] * factor, in place.
cudaError_t scale(void* x, Elem elem, int64_t n, float factor, cudaStream_t stream);
// x[i] = cap * tanh(x[i] / cap), in place.
cudaError_t softcap(void* x, Elem elem, int64_t n, float cap, cudaStream_t stream);
// x[t, :] = x[t, :] * sigmoid(gate[t]) for x [tokens, hidden], gate [tokens], in place.
cudaError_t sigmoid_gate(void* x, const void* gate, Elem elem, int64_t tokens, int64_t hidden, cudaStream_t stream);
// ids[t] (int64) = first index of the maximum of x[t, :], x [tokens, vocab]; NaN never
// wins except that a NaN at index 0 gives 0 (the CPU scan's rule); vocab 0 gives 0.
cudaError_t argmax(int64_t* ids, const void* x, Elem elem, int64_t tokens, int64_t vocab, cudaStream_t stream);

}  // namespace fk::cuda::launch
