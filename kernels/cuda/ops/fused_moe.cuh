// What the two halves of the CUDA fused_moe baseline share (nvcc, C++17): the routing
// tables the GEMMs read, the expert activation, and the tensor-core grouped GEMM of
// fused_moe_mma.cu that fused_moe.cu calls for fp16/bf16.
//
// Routing lays the (token, slot) pairs out grouped by expert (`sorted[pos]` = the pair at
// row pos of that layout) and cuts each expert's rows into tiles of BM rows: tile t is
// rows [tile_row0[t], tile_row0[t] + tile_rows[t]) of expert tile_expert[t]; *num_tiles
// tiles in all, known only on the device (nothing syncs).
#pragma once

#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::moe {

struct Route {
  const int32_t *tile_expert, *tile_row0, *tile_rows, *num_tiles, *sorted;
};

// act(x): 0 silu, 1 gelu_tanh, otherwise gelu (erf), in fp32 (the CPU baseline's points).
__device__ __forceinline__ float activate(int kind, float x) {
  if (kind == 0) return x / (1.f + expf(-x));
  if (kind == 1) return 0.5f * x * (1.f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
  return 0.5f * x * (1.f + erff(x / 1.41421356237f));
}

// The gated pair of an expert row (kernels/ops/fused_moe.cc): the optional w13 bias
// ([E, 2 I] of the element type) added to gate and up, then act(gate) * up, or for
// activation 3 gpt-oss' clamped SwiGLU (u + 1) * g * sigmoid(alpha * g) with
// g = min(gate, limit), u = clamp(up, -limit, limit).
struct GatedAct {
  int activation = 0;
  float alpha = 0.f, limit = 0.f;
  const void* bias = nullptr;
};

template <typename T>
__device__ __forceinline__ float gated(const GatedAct& a, int64_t e, int64_t inter, int64_t j, float gate, float up) {
  if (a.bias != nullptr) {
    const T* b = static_cast<const T*>(a.bias) + e * 2 * inter;
    gate += dev::to_f32(b[j]);
    up += dev::to_f32(b[inter + j]);
  }
  if (a.activation == 3) {
    const float g = fminf(gate, a.limit), u = fminf(fmaxf(up, -a.limit), a.limit);
    return (u + 1.f) * g / (1.f + expf(-a.alpha * g));
  }
  return activate(a.activation, gate) * up;
}

// One grouped GEMM of the tensor-core path, over the tiles of `route`:
//   gated: a = hidden_states [tokens, k = H] (row sorted[pos] / topk), b = w13
//          [E, 2 n, k] with n = I; dst = mid [pairs, n] of the element type,
//          mid = round(gated(x w_gate^T, x w_up^T)) (GatedAct).
//   down:  a = mid [pairs, k = I] (row pos), b = w2 [E, n, k] with n = H; dst = y
//          [splits, pairs, n] fp32, split s holding the partial sum over its share of k.
struct MmaGemm {
  const void* a;
  const void* b;
  void* dst;
  Route route;
  int64_t k, n, topk, pairs, max_tiles;
  GatedAct act;  // the gated GEMM's epilogue
  int splits;  // 1 for the gated GEMM
};

// Tile rows of the tensor-core path: 16, 64 or 128.
constexpr int kMmaTileRows[] = {16, 64, 128};

// Launches one grouped GEMM (bm one of kMmaTileRows) for fp16/bf16 `elem`. Needs sm_80+,
// k and n multiples of 8 and 16-byte aligned a, b and dst.
cudaError_t mma_gemm(launch::Elem elem, bool gated, int bm, const MmaGemm& g, cudaStream_t stream);

// Output columns of one block: the gated GEMM's 128 are 64 gate and 64 up columns.
constexpr int kMmaBlockCols = 128;

// The GEMV form (fused_moe_gemv.cu), for a few pairs: no routing tables; pair p's row in
// mid [pairs, I] (of the element type) and y [pairs, H] (fp32) is p itself, and a pair
// whose id is not in [0, experts) gets neither (the combine skips it).
//   mid = round(gated(x w_gate^T, x w_up^T)), y = mid @ w2[e]^T.
struct GemvExperts {
  const void *x, *w13, *w2;
  void* mid;
  float* y;
  const int32_t* ids;
  int64_t pairs, experts, hidden, inter, topk;
  GatedAct act;
};

// Pairs each expert's weights are streamed for at once; more read them again.
constexpr int kGemvGroup = 8;
// The form is taken for at most this many pairs, and at most kGemvRowsPerExpert of them
// an expert on average (past that the tiled tensor-core GEMMs read each weight once). On
// an H100 (bench/RESULTS.md, device run of 2026-12-07) the form took Qwen3-30B-A3B's one
// token (8 pairs over 128 experts) in 48.5 us against the grouped GEMMs' 84.9, tied at 8
// tokens (0.5 an expert: 228.4 / 225.2 us), and lost Mixtral's 8 tokens (16 pairs over 8
// experts, 2 an expert: 1180.8 / 825.9 us): one an expert at most.
constexpr int64_t kGemvMaxPairs = 64, kGemvRowsPerExpert = 1;

// Whether the GEMV form takes these sizes: pairs within the bounds above, hidden and
// inter whole 16-byte vectors. The caller checks that x, w13, w2 and mid are 16-byte
// aligned.
bool gemv_fits(launch::Elem elem, int64_t pairs, int64_t experts, int64_t hidden, int64_t inter);

// Enqueues both GEMV kernels (gate/up, then down) on `stream`.
cudaError_t gemv_experts(launch::Elem elem, const GemvExperts& g, cudaStream_t stream);

}  // namespace fk::cuda::moe
