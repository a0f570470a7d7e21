// Launcher of the CUDA fused_moe baseline (plain arguments; see elem.h and
// kernels/ops/fused_moe.cc for the semantics). The caller provides the scratch
// memory (fused_moe_workspace_bytes) and keeps it alive until the work has run.
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace fk::cuda::launch {

// Bytes of scratch fused_moe needs for these sizes; 0 means it needs none (workspace
// may then be null).
size_t fused_moe_workspace_bytes(Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter,
                                 int64_t topk);

// out[t] = sum_i topk_weights[t, i] * expert_{topk_ids[t, i]}(hidden_states[t]) with
// expert_e(x) = (act(x @ w13[e, :I]^T) * (x @ w13[e, I:]^T)) @ w2[e]^T; activation 0 silu,
// 1 gelu_tanh, otherwise gelu (erf). out, hidden_states [tokens, hidden], w13
// [experts, 2 inter, hidden], w2 [experts, hidden, inter] of `elem`; topk_weights fp32
// and topk_ids int32 [tokens, topk]; all contiguous. A (token, slot) whose id is not in
// [0, experts) contributes nothing (the CPU baseline throws; a kernel cannot).
cudaError_t fused_moe(void* out, const void* hidden_states, const void* w13, const void* w2,
                      const float* topk_weights, const int32_t* topk_ids, Elem elem, int64_t tokens, int64_t hidden,
                      int64_t experts, int64_t inter, int64_t topk, int activation, void* workspace,
                      cudaStream_t stream);

}  // namespace fk::cuda::launch
