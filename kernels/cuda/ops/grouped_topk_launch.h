// Launcher of the CUDA grouped_topk baseline (plain arguments; see elem.h and
// kernels/ops/grouped_topk.cc for the semantics).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// Most expert groups the baseline keeps a warp's group scores for.
inline constexpr int64_t kGroupedTopkMaxGroups = 64;

// Per token t of gating [tokens, experts] (`elem`): scores (softmax, or sigmoid when
// `sigmoid`), choice = scores + bias (bias fp32 [experts], or null), the `topk_group`
// best of `groups` groups (a group's score: the sum of its two largest choice values
// with a bias, its largest score without), the k best experts among them (ties: lower
// id first); weights [tokens, k] fp32 = their scores, renormalised when asked, times
// `scale`; ids [tokens, k] int32. groups <= kGroupedTopkMaxGroups and divides experts;
// 1 <= topk_group <= groups; 1 <= k <= topk_group x experts / groups.
cudaError_t grouped_topk(float* weights, int32_t* ids, const void* gating, const float* bias, Elem elem, int64_t tokens,
                         int64_t experts, int64_t k, int64_t groups, int64_t topk_group, bool renormalize, bool sigmoid,
                         float scale, cudaStream_t stream);

}  // namespace fk::cuda::launch
