// Launcher of the CUDA topk_softmax baseline (plain arguments; see elem.h and
// kernels/ops/topk_softmax.cc for the semantics).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// Per token t: p = softmax(gating[t, :]) in fp32; weights[t, i] and ids[t, i] are the
// i-th largest p and its expert id (ties: lower id first), weights divided by their
// sum when `renormalize`. gating [tokens, experts] of `elem`; weights fp32 and ids
// int32 [tokens, k]; 1 <= k <= experts; all contiguous.
cudaError_t topk_softmax(float* weights, int32_t* ids, const void* gating, Elem elem, int64_t tokens, int64_t experts,
                         int64_t k, bool renormalize, cudaStream_t stream);

}  // namespace fk::cuda::launch
