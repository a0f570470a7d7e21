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

// The expert activation: kind 0 silu, 1 gelu_tanh, 2 gelu (erf), each act(gate) * up;
// 3 gpt-oss' clamped SwiGLU with alpha and limit (kernels/ops/fused_moe.cc).
struct MoeActivation {
  int kind = 0;
  float alpha = 0.f, limit = 0.f;
};

// out[t] = sum_i topk_weights[t, i] * expert_{topk_ids[t, i]}(hidden_states[t]) with
// expert_e(x) = gated(x @ w13[e, :I]^T + b13[e, :I], x @ w13[e, I:]^T + b13[e, I:]) @ w2[e]^T
// + b2[e]; w13_bias [experts, 2 inter] and w2_bias [experts, hidden] of `elem` may be null. out, hidden_states [tokens,
// hidden], w13 [experts, 2 inter, hidden], w2 [experts, hidden, inter] of `elem`; topk_weights fp32 and topk_ids int32
// [tokens, topk]; all contiguous. A (token, slot) whose id is not in [0, experts) contributes nothing (the CPU baseline
// throws; a kernel cannot). gemv: a few pairs (a decode step) may take the GEMV form (fused_moe_gemv.cu); false keeps
// them on the grouped GEMMs.
cudaError_t fused_moe(void* out, const void* hidden_states, const void* w13, const void* w2, const float* topk_weights,
                      const int32_t* topk_ids, const void* w13_bias, const void* w2_bias, Elem elem, int64_t tokens,
                      int64_t hidden, int64_t experts, int64_t inter, int64_t topk, const MoeActivation& activation,
                      bool gemv, void* workspace, cudaStream_t stream);

// The tiled form, for prefill sizes (fp16/bf16, hidden and inter multiples of 8, more
// than 96 rows an expert expected; fused_moe_tiled_fits): routing cuts each expert's
// pairs into tiles of `tile` rows and gives every tile a slot of its own in padded
// buffers, so that the caller runs both GEMMs as pointer-array batched GEMMs over all
// the tile slots (MoeTiled: m = tile rows each, fp32 outputs):
//   1. fused_moe_tiled_prepare: routing, the token rows gathered into their slots, the
//      pointer arrays;
//   2. gate_up: gu[slot] (fp32, [tile, 2 inter]) = a[slot] @ w13[e]^T;
//   3. fused_moe_tiled_act: mid = round(gated(gate, up)) for the routed rows (w13's bias);
//   4. down: y[slot] (fp32, [tile, hidden]) = mid[slot] @ w2[e]^T;
//   5. fused_moe_tiled_combine: out as fused_moe's combine (w2's bias).
// Slots past the routed tiles hold rows nothing reads. Nothing syncs (it may be captured).
struct MoeBatch {
  void* const* out;  // max_tiles device pointers each (device arrays)
  const void* const* x;
  const void* const* w;
};
struct MoeTiled {
  int64_t max_tiles = 0, rows = 0;
  MoeBatch gate_up{}, down{};
};
// The tile height for these sizes: 256 rows with 512 or more rows an expert expected,
// else 128 (fused_moe.cu says what was measured).
int64_t fused_moe_tiled_rows(int64_t tokens, int64_t experts, int64_t topk);
// `tile`: 128, 256 or 512 rows.
bool fused_moe_tiled_fits(Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter, int64_t topk,
                          int64_t tile);
size_t fused_moe_tiled_workspace_bytes(Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter,
                                       int64_t topk, int64_t tile);
MoeTiled fused_moe_tiled_views(Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter, int64_t topk,
                               int64_t tile, void* workspace);
cudaError_t fused_moe_tiled_prepare(const void* hidden_states, const void* w13, const void* w2, const int32_t* topk_ids,
                                    Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter,
                                    int64_t topk, int64_t tile, void* workspace, cudaStream_t stream);
cudaError_t fused_moe_tiled_act(Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter, int64_t topk,
                                int64_t tile, const MoeActivation& activation, const void* w13_bias, void* workspace,
                                cudaStream_t stream);
cudaError_t fused_moe_tiled_combine(void* out, const float* topk_weights, const int32_t* topk_ids, const void* w2_bias,
                                    Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter,
                                    int64_t topk, int64_t tile, void* workspace, cudaStream_t stream);

}  // namespace fk::cuda::launch
