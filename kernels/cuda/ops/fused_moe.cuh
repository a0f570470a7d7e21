// What the two halves of the CUDA fused_moe baseline share (nvcc, C++17): the routing
// tables the GEMMs read, the expert activation, and the tensor-core grouped GEMM of
// fused_moe_mma.cu that fused_moe.cu calls for fp16/bf16.
//
// Routing lays the (token, slot) pairs out grouped by expert (`sorted[pos]` = the pair at
// row pos of that layout) and cuts each expert's rows into tiles of BM rows: tile t is
// rows [tile_row0[t], tile_row0[t] + tile_rows[t]) of expert tile_expert[t]; *num_tiles
// tiles in all, known only on the device (nothing syncs).
#pragma once

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

// One grouped GEMM of the tensor-core path, over the tiles of `route`:
//   gated: a = hidden_states [tokens, k = H] (row sorted[pos] / topk), b = w13
//          [E, 2 n, k] with n = I; dst = mid [pairs, n] of the element type,
//          mid = round(act(x w_gate^T) * (x w_up^T)).
//   down:  a = mid [pairs, k = I] (row pos), b = w2 [E, n, k] with n = H; dst = y
//          [splits, pairs, n] fp32, split s holding the partial sum over its share of k.
struct MmaGemm {
  const void* a;
  const void* b;
  void* dst;
  Route route;
  int64_t k, n, topk, pairs, max_tiles;
  int activation;
  int splits;  // 1 for the gated GEMM
};

// Tile rows of the tensor-core path: 16, 64 or 128.
constexpr int kMmaTileRows[] = {16, 64, 128};

// Launches one grouped GEMM (bm one of kMmaTileRows) for fp16/bf16 `elem`. Needs sm_80+,
// k and n multiples of 8 and 16-byte aligned a, b and dst.
cudaError_t mma_gemm(launch::Elem elem, bool gated, int bm, const MmaGemm& g, cudaStream_t stream);

// Output columns of one block: the gated GEMM's 128 are 64 gate and 64 up columns.
constexpr int kMmaBlockCols = 128;

}  // namespace fk::cuda::moe
