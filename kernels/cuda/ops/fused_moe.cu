// CUDA fused_moe baseline, in the CPU baseline's steps and rounding points:
//   1. routing: count the (token, slot) pairs per expert, lay them out grouped by
//      expert (pos_of[pair] = row in that layout) and cut each expert's rows into
//      tiles of BM rows (one thread plans the tiles: E + tiles steps);
//   2. gate/up GEMM per tile, fp32 accumulation; mid = act(gate) * up (moe::gated: the
//      w13 bias first, gpt-oss' clamped SwiGLU for activation 3) rounded to the element type
//      (the CPU's one intermediate rounding), stored [pairs, I];
//   3. down GEMM per tile, y = mid @ w2[e]^T kept in fp32, stored [splits, pairs, H]
//      (split s: the partial sum over its share of I; one split but on the tensor-core
//      path at decode sizes);
//   4. combine: out[t] = round(sum over slots of topk_weights * (sum over splits of y
//      + the expert's w2 bias)),
//      fp32, each output element summed by one thread in slot order (deterministic, no
//      atomics).
// A few pairs (moe::gemv_fits: a decode step) skip steps 1 to 3 for the GEMV form of
// fused_moe_gemv.cu, which streams each chosen expert's weights once, and combine.
// fp16/bf16 with H and I multiples of 8 on sm_80+ take the tensor-core grouped GEMMs of
// fused_moe_mma.cu (BM 16, 64 or 128 by the expected rows per expert). Otherwise (fp32,
// odd sizes, older GPUs) both GEMMs are one tiled SIMT kernel: kBM x kBN outputs per
// block, K in steps of kBK through shared memory as fp32. Every step is enqueued on one
// stream; nothing syncs.
#include "kernels/cuda/ops/attention.cuh"
#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/fused_moe.cuh"
#include "kernels/cuda/ops/fused_moe_launch.h"

#include <algorithm>
#include <climits>

namespace fk::cuda {
namespace {

constexpr int kBM = 32, kBN = 64, kBK = 32, kGemmThreads = 256;  // 2 x 4 outputs per thread
constexpr int kBlock = 256;                                         // threads of the simple kernels

// How a call runs: the tensor-core path (tile rows bm, the down GEMM's K splits) or the
// SIMT one (tile rows kBM, one split). Shapes alone decide, but for the device's
// compute capability and SM count; the launch falls back to SIMT for unaligned pointers,
// which needs no more scratch.
struct Plan {
  bool mma = false;
  int bm = kBM;
  int splits = 1;
};

Plan plan_of(launch::Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter, int64_t topk) {
  Plan p;
  if (elem == launch::Elem::kF32 || hidden % 8 != 0 || inter % 8 != 0) return p;
  const AttentionDevice dev = attention_device();
  if (dev.major < 8) return p;
  p.mma = true;
  const int64_t pairs = tokens * topk;
  const double rows_per_expert = static_cast<double>(pairs) / static_cast<double>(experts);
  p.bm = rows_per_expert <= 24 ? 16 : rows_per_expert <= 96 ? 64 : 128;
  // The down GEMM has H / 128 column blocks per tile; at decode sizes (a few tiles) that
  // leaves SMs idle, so K is split until about two blocks per SM are expected.
  const int64_t tiles = std::max((pairs + p.bm - 1) / p.bm, std::min(experts, pairs));
  const int64_t blocks = std::max<int64_t>(1, tiles * ((hidden + moe::kMmaBlockCols - 1) / moe::kMmaBlockCols));
  const int64_t want = (2 * std::max(dev.sms, 1) + blocks - 1) / blocks;
  const int64_t most = std::max<int64_t>(1, (inter + 31) / 32 / 8);  // at least 8 K steps a split
  p.splits = static_cast<int>(std::clamp<int64_t>(want, 1, std::min<int64_t>(most, 16)));
  return p;
}

// Tiles of `bm` rows there can be at most: sum over experts of ceil(count / bm).
int64_t max_tiles_of(int64_t pairs, int64_t experts, int bm) { return (pairs + experts * (bm - 1)) / bm; }

// Offsets of the parts of one scratch allocation, each 256-byte aligned.
struct Carver {
  size_t off = 0;
  size_t take(size_t bytes) {
    const size_t at = off;
    off += (bytes + 255) / 256 * 256;
    return at;
  }
  static size_t ints(int64_t n) { return static_cast<size_t>(n) * sizeof(int32_t); }
};

// The routing tables at the front of either form's scratch (counts and cursor adjacent:
// one memset zeroes both).
struct RouteTables {
  int64_t pairs, max_tiles;
  size_t counts, cursor, offsets, first_tile, num_tiles, tile_expert, tile_row0, tile_rows;
};

void carve_route(Carver& c, RouteTables& r, int64_t experts) {
  r.counts = c.take(Carver::ints(experts));
  r.cursor = c.take(Carver::ints(experts));
  r.offsets = c.take(Carver::ints(experts));
  r.first_tile = c.take(Carver::ints(experts));
  r.num_tiles = c.take(Carver::ints(1));
  r.tile_expert = c.take(Carver::ints(r.max_tiles));
  r.tile_row0 = c.take(Carver::ints(r.max_tiles));
  r.tile_rows = c.take(Carver::ints(r.max_tiles));
}

struct Layout : RouteTables {  // max_tiles: for the smallest tile (16 rows), so any path fits
  size_t pos_of, sorted, mid, y, total;
};

Layout layout_of(size_t elem_size, const Plan& plan, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter,
                 int64_t topk) {
  Layout l{};
  l.pairs = tokens * topk;
  l.max_tiles = max_tiles_of(l.pairs, experts, std::min(plan.bm, kBM));
  Carver c;
  carve_route(c, l, experts);
  l.pos_of = c.take(Carver::ints(l.pairs));
  l.sorted = c.take(Carver::ints(l.pairs));
  l.mid = c.take(static_cast<size_t>(l.pairs) * static_cast<size_t>(inter) * elem_size);
  l.y = c.take(static_cast<size_t>(plan.splits) * static_cast<size_t>(l.pairs) * static_cast<size_t>(hidden) *
               sizeof(float));
  l.total = c.off;
  return l;
}

// Nothing to compute: every output element is 0 (or there are none).
bool trivial(int64_t tokens, int64_t hidden, int64_t experts, int64_t inter, int64_t topk) {
  return tokens == 0 || hidden == 0 || experts == 0 || inter == 0 || topk == 0;
}

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 65536 ? b : 65536);
}

__global__ void route_count(const int32_t* __restrict__ ids, int64_t pairs, int experts, int32_t* __restrict__ counts) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < pairs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t e = ids[i];
    if (e >= 0 && e < experts) atomicAdd(&counts[e], 1);
  }
}

// One thread: exclusive prefix sum of the counts, the list of tiles of bm rows and each
// expert's first tile.
__global__ void route_plan(const int32_t* __restrict__ counts, int experts, int bm, int32_t* __restrict__ offsets,
                           int32_t* __restrict__ first_tile, int32_t* __restrict__ tile_expert,
                           int32_t* __restrict__ tile_row0, int32_t* __restrict__ tile_rows,
                           int32_t* __restrict__ num_tiles) {
  int32_t row = 0, tiles = 0;
  for (int e = 0; e < experts; ++e) {
    offsets[e] = row;
    first_tile[e] = tiles;
    for (int32_t r = 0; r < counts[e]; r += bm) {
      tile_expert[tiles] = e;
      tile_row0[tiles] = row + r;
      tile_rows[tiles] = counts[e] - r < bm ? counts[e] - r : bm;
      ++tiles;
    }
    row += counts[e];
  }
  *num_tiles = tiles;
}

__global__ void route_fill(const int32_t* __restrict__ ids, int64_t pairs, int experts,
                           const int32_t* __restrict__ offsets, int32_t* __restrict__ cursor,
                           int32_t* __restrict__ sorted, int32_t* __restrict__ pos_of) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < pairs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t e = ids[i];
    if (e >= 0 && e < experts) {
      const int32_t pos = offsets[e] + atomicAdd(&cursor[e], 1);
      sorted[pos] = static_cast<int32_t>(i);
      pos_of[i] = pos;
    } else {
      pos_of[i] = -1;
    }
  }
}

struct GemmArgs {
  const int32_t *tile_expert, *tile_row0, *tile_rows, *num_tiles, *sorted;
  int64_t k;          // reduction length: H (gate/up) or I (down)
  int64_t n;          // output columns: I (gate/up) or H (down)
  int64_t topk;
  moe::GatedAct act;
};

// kGated: A rows are hidden_states[token of the pair], B rows of block column c are
// w13[e] rows n0 + c % 32 (c < 32, gate) or I + n0 + c % 32 (up), n0 = 32 blockIdx.y;
// writes mid[pos, j]. Otherwise A rows are mid[pos], B rows w2[e] rows 64 blockIdx.y + c;
// writes y[pos, q] in fp32.
template <typename T, bool kGated>
__global__ void __launch_bounds__(kGemmThreads)
    moe_gemm(const T* __restrict__ a, const T* __restrict__ b, void* __restrict__ dst, GemmArgs g) {
  const int tile = blockIdx.x;
  if (tile >= *g.num_tiles) return;  // the grid is sized for the most tiles possible
  __shared__ float as[kBM][kBK + 1];
  __shared__ float bs[kBN][kBK + 1];
  __shared__ const T* arow[kBM];
  __shared__ const T* brow[kBN];
  const int e = g.tile_expert[tile], row0 = g.tile_row0[tile], rows = g.tile_rows[tile];
  const int64_t n0 = static_cast<int64_t>(blockIdx.y) * (kGated ? kBN / 2 : kBN);
  const int tid = threadIdx.x;
  if (tid < kBM) {
    const T* p = nullptr;
    if (tid < rows) {
      const int64_t pos = row0 + tid;
      p = kGated ? a + static_cast<size_t>(g.sorted[pos] / g.topk) * g.k : a + static_cast<size_t>(pos) * g.k;
    }
    arow[tid] = p;
  } else if (tid < kBM + kBN) {
    const int c = tid - kBM;
    const T* p = nullptr;
    if (kGated) {
      const int64_t j = n0 + c % (kBN / 2);
      if (j < g.n) p = b + (static_cast<size_t>(e) * 2 * g.n + (c < kBN / 2 ? j : g.n + j)) * g.k;
    } else {
      const int64_t q = n0 + c;
      if (q < g.n) p = b + (static_cast<size_t>(e) * g.n + q) * g.k;
    }
    brow[c] = p;
  }

  const int tx = tid % 16, ty = tid / 16;
  float acc[2][4] = {};
  for (int64_t k0 = 0; k0 < g.k; k0 += kBK) {
    __syncthreads();  // the row pointers are stored / the previous tile is consumed
    for (int idx = tid; idx < kBM * kBK; idx += kGemmThreads) {
      const int r = idx / kBK, kk = idx % kBK;
      as[r][kk] = arow[r] && k0 + kk < g.k ? dev::to_f32(arow[r][k0 + kk]) : 0.f;
    }
    for (int idx = tid; idx < kBN * kBK; idx += kGemmThreads) {
      const int c = idx / kBK, kk = idx % kBK;
      bs[c][kk] = brow[c] && k0 + kk < g.k ? dev::to_f32(brow[c][k0 + kk]) : 0.f;
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kBK; ++kk) {
      const float a0 = as[ty][kk], a1 = as[ty + 16][kk];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const float bv = bs[tx + 16 * c][kk];
        acc[0][c] += a0 * bv;
        acc[1][c] += a1 * bv;
      }
    }
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int rr = ty + 16 * r;
    if (rr >= rows) continue;
    const size_t pos = static_cast<size_t>(row0 + rr);
    if (kGated) {  // columns tx, tx + 16 are gate j; tx + 32, tx + 48 the up rows of the same j
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int64_t j = n0 + tx + 16 * c;
        if (j < g.n)
          static_cast<T*>(dst)[pos * g.n + j] =
              dev::from_f32<T>(moe::gated<T>(g.act, e, g.n, j, acc[r][c], acc[r][c + 2]));
      }
    } else {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int64_t q = n0 + tx + 16 * c;
        if (q < g.n) static_cast<float*>(dst)[pos * g.n + q] = acc[r][c];
      }
    }
  }
}

// b2: w2's bias [E, hidden] of T, or null; ids give the pair's expert. pos_of null: pair
// i's row is i (the GEMV form), none for an id out of [0, experts).
template <typename T>
__global__ void moe_combine(T* __restrict__ out, const float* __restrict__ y, const float* __restrict__ tw,
                            const int32_t* __restrict__ pos_of, const int32_t* __restrict__ ids,
                            const T* __restrict__ b2, int64_t tokens, int64_t hidden, int64_t experts, int64_t topk,
                            int splits) {
  const size_t slice = static_cast<size_t>(tokens * topk) * static_cast<size_t>(hidden);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < tokens * hidden;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / hidden, q = i % hidden;
    float acc = 0.f;
    for (int64_t s = 0; s < topk; ++s) {
      const int64_t pair = t * topk + s;
      const int64_t pos = pos_of != nullptr ? pos_of[pair] : ids[pair] >= 0 && ids[pair] < experts ? pair : -1;
      if (pos < 0) continue;
      const float* v = y + static_cast<size_t>(pos) * hidden + q;
      float sum = v[0];
      for (int sp = 1; sp < splits; ++sp) sum += v[sp * slice];
      if (b2 != nullptr) sum += dev::to_f32(b2[static_cast<int64_t>(ids[pair]) * hidden + q]);
      acc += tw[pair] * sum;
    }
    out[i] = dev::from_f32<T>(acc);
  }
}

template <typename T>
struct FusedMoe {
  static cudaError_t run(void* out, const void* x, const void* w13, const void* w2, const float* tw, const int32_t* ids,
                         const void* b2, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter, int64_t topk,
                         moe::GatedAct act, bool gemv, void* workspace, cudaStream_t stream) {
    if (trivial(tokens, hidden, experts, inter, topk))
      return tokens * hidden == 0 ? cudaSuccess
                                  : cudaMemsetAsync(out, 0, static_cast<size_t>(tokens * hidden) * sizeof(T), stream);
    const Plan plan = plan_of(dev::elem_of<T>, tokens, hidden, experts, inter, topk);
    const Layout l = layout_of(sizeof(T), plan, tokens, hidden, experts, inter, topk);
    if (workspace == nullptr || l.pairs > INT_MAX || experts > INT_MAX || l.max_tiles > INT_MAX)
      return cudaErrorInvalidValue;
    char* ws = static_cast<char*>(workspace);
    const auto at = [&](size_t off) { return reinterpret_cast<int32_t*>(ws + off); };
    T* mid = reinterpret_cast<T*>(ws + l.mid);
    float* y = reinterpret_cast<float*>(ws + l.y);
    const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    if (gemv && moe::gemv_fits(dev::elem_of<T>, l.pairs, experts, hidden, inter) && aligned(x) && aligned(w13) &&
        aligned(w2) && aligned(mid)) {
      const cudaError_t err = moe::gemv_experts(
          dev::elem_of<T>, moe::GemvExperts{x, w13, w2, mid, y, ids, l.pairs, experts, hidden, inter, topk, act},
          stream);
      if (err != cudaSuccess) return err;
      moe_combine<T><<<blocks_for(tokens * hidden), kBlock, 0, stream>>>(
          static_cast<T*>(out), y, tw, nullptr, ids, static_cast<const T*>(b2), tokens, hidden, experts, topk, 1);
      return cudaGetLastError();
    }
    const bool mma = plan.mma && aligned(x) && aligned(w13) && aligned(w2) && aligned(mid);
    const int bm = mma ? plan.bm : kBM;
    if (!mma && ((inter + kBN / 2 - 1) / (kBN / 2) > 65535 || (hidden + kBN - 1) / kBN > 65535))
      return cudaErrorInvalidValue;
    // counts and cursor are adjacent: one memset zeroes both.
    cudaError_t err = cudaMemsetAsync(ws + l.counts, 0, l.offsets - l.counts, stream);
    if (err != cudaSuccess) return err;
    const int e = static_cast<int>(experts);
    route_count<<<blocks_for(l.pairs), kBlock, 0, stream>>>(ids, l.pairs, e, at(l.counts));
    route_plan<<<1, 1, 0, stream>>>(at(l.counts), e, bm, at(l.offsets), at(l.first_tile), at(l.tile_expert),
                                    at(l.tile_row0), at(l.tile_rows), at(l.num_tiles));
    route_fill<<<blocks_for(l.pairs), kBlock, 0, stream>>>(ids, l.pairs, e, at(l.offsets), at(l.cursor),
                                                           at(l.sorted), at(l.pos_of));
    const int64_t tiles = max_tiles_of(l.pairs, experts, bm);
    if (mma) {
      const moe::Route route{at(l.tile_expert), at(l.tile_row0), at(l.tile_rows), at(l.num_tiles), at(l.sorted)};
      err = moe::mma_gemm(dev::elem_of<T>, true, bm,
                          moe::MmaGemm{x, w13, mid, route, hidden, inter, topk, l.pairs, tiles, act, 1}, stream);
      if (err != cudaSuccess) return err;
      err =
          moe::mma_gemm(dev::elem_of<T>, false, bm,
                        moe::MmaGemm{mid, w2, y, route, inter, hidden, topk, l.pairs, tiles, act, plan.splits}, stream);
      if (err != cudaSuccess) return err;
    } else {
      GemmArgs g{
          at(l.tile_expert), at(l.tile_row0), at(l.tile_rows), at(l.num_tiles), at(l.sorted), hidden, inter, topk, act};
      const dim3 grid1(static_cast<unsigned>(tiles), static_cast<unsigned>((inter + kBN / 2 - 1) / (kBN / 2)));
      moe_gemm<T, true>
          <<<grid1, kGemmThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(w13), mid, g);
      g.k = inter;
      g.n = hidden;
      const dim3 grid2(static_cast<unsigned>(tiles), static_cast<unsigned>((hidden + kBN - 1) / kBN));
      moe_gemm<T, false><<<grid2, kGemmThreads, 0, stream>>>(mid, static_cast<const T*>(w2), y, g);
    }
    moe_combine<T><<<blocks_for(tokens * hidden), kBlock, 0, stream>>>(static_cast<T*>(out), y, tw, at(l.pos_of), ids,
                                                                       static_cast<const T*>(b2), tokens, hidden,
                                                                       experts, topk, mma ? plan.splits : 1);
    return cudaGetLastError();
  }
};

size_t elem_size(launch::Elem elem) { return elem == launch::Elem::kF32 ? 4 : 2; }

// ---- The tiled form (launch::fused_moe_tiled_*): every tile of `tile` rows (128, 256
// or 512) its own slot of that many rows in padded buffers, so that one pointer-array
// batched GEMM runs all the tiles (the caller's cuBLASLt). Pair i's row is pad_of[i] in
// every buffer.

bool tile_rows_ok(int64_t tile) { return tile == 128 || tile == 256 || tile == 512; }

struct TiledLayout : RouteTables {
  int64_t tile, rows;  // rows: max_tiles * tile
  size_t pad_of, ptrs, a_pad, gu, mid, y, total;
};

TiledLayout tiled_layout_of(size_t elem_size, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter,
                            int64_t topk, int64_t tile) {
  TiledLayout l{};
  l.tile = tile;
  l.pairs = tokens * topk;
  l.max_tiles = max_tiles_of(l.pairs, experts, static_cast<int>(tile));
  l.rows = l.max_tiles * tile;
  const auto rows_of = [&](int64_t width, size_t bytes) {
    return static_cast<size_t>(l.rows) * static_cast<size_t>(width) * bytes;
  };
  Carver c;
  carve_route(c, l, experts);
  l.pad_of = c.take(Carver::ints(l.pairs));
  l.ptrs = c.take(6 * static_cast<size_t>(l.max_tiles) * sizeof(void*));
  l.a_pad = c.take(rows_of(hidden, elem_size));
  l.gu = c.take(rows_of(2 * inter, sizeof(float)));
  l.mid = c.take(rows_of(inter, elem_size));
  l.y = c.take(rows_of(hidden, sizeof(float)));
  l.total = c.off;
  return l;
}

// pad_of[i]: pair i's row in the padded buffers (its expert's first tile's slot plus its
// place among the expert's pairs); -1 for an id out of range.
__global__ void tiled_fill(const int32_t* __restrict__ ids, int64_t pairs, int experts, int tile,
                           const int32_t* __restrict__ first_tile, int32_t* __restrict__ cursor,
                           int32_t* __restrict__ pad_of) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < pairs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int32_t e = ids[i];
    pad_of[i] = e >= 0 && e < experts ? first_tile[e] * tile + atomicAdd(&cursor[e], 1) : -1;
  }
}

// a_pad[pad_of[i]] = hidden_states[i / topk], 16 bytes a thread (hidden * elem a multiple of 16).
__global__ void tiled_gather(uint4* __restrict__ a_pad, const uint4* __restrict__ x, const int32_t* __restrict__ pad_of,
                             int64_t pairs, int64_t row_vecs, int64_t topk) {
  for (int64_t i = blockIdx.x; i < pairs; i += gridDim.x) {
    const int32_t pad = pad_of[i];
    if (pad < 0) continue;
    const uint4* src = x + (i / topk) * row_vecs;
    uint4* dst = a_pad + static_cast<int64_t>(pad) * row_vecs;
    for (int64_t v = threadIdx.x; v < row_vecs; v += blockDim.x) dst[v] = src[v];
  }
}

// The batched GEMMs' pointer arrays, one entry a tile slot: gate/up (a_pad rows x w13 of
// the tile's expert -> gu rows) and down (mid rows x w2 -> y rows). Slots past the
// tiles routing made compute on their own rows, which nothing reads.
template <typename T>
__global__ void tiled_pointers(void** __restrict__ ptrs, int64_t max_tiles, int64_t tile,
                               const int32_t* __restrict__ num_tiles, const int32_t* __restrict__ tile_expert,
                               const T* a_pad, const T* w13, const T* w2, float* gu, const T* mid, float* y,
                               int64_t hidden, int64_t inter) {
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < max_tiles;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = t < *num_tiles ? tile_expert[t] : 0, r0 = t * tile;
    ptrs[t] = const_cast<T*>(a_pad + r0 * hidden);
    ptrs[max_tiles + t] = const_cast<T*>(w13 + e * 2 * inter * hidden);
    ptrs[2 * max_tiles + t] = gu + r0 * 2 * inter;
    ptrs[3 * max_tiles + t] = const_cast<T*>(mid + r0 * inter);
    ptrs[4 * max_tiles + t] = const_cast<T*>(w2 + e * hidden * inter);
    ptrs[5 * max_tiles + t] = y + r0 * hidden;
  }
}

// mid[row, j] = round(gated(gu[row, j], gu[row, inter + j])) for the rows of routed
// tiles, 4 columns a thread (inter a multiple of 8).
template <typename T>
__global__ void tiled_act(T* __restrict__ mid, const float* __restrict__ gu, const int32_t* __restrict__ num_tiles,
                          const int32_t* __restrict__ tile_rows, const int32_t* __restrict__ tile_expert, int64_t rows,
                          int64_t tile_size, int64_t inter, moe::GatedAct act) {
  const int64_t quads = inter / 4;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * quads;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / quads, j = (i % quads) * 4, tile = row / tile_size;
    if (tile >= *num_tiles || row % tile_size >= tile_rows[tile]) continue;
    const float4 g = *reinterpret_cast<const float4*>(gu + row * 2 * inter + j);
    const float4 u = *reinterpret_cast<const float4*>(gu + row * 2 * inter + inter + j);
    T* o = mid + row * inter + j;
    const int64_t e = tile_expert[tile];
    o[0] = dev::from_f32<T>(moe::gated<T>(act, e, inter, j, g.x, u.x));
    o[1] = dev::from_f32<T>(moe::gated<T>(act, e, inter, j + 1, g.y, u.y));
    o[2] = dev::from_f32<T>(moe::gated<T>(act, e, inter, j + 2, g.z, u.z));
    o[3] = dev::from_f32<T>(moe::gated<T>(act, e, inter, j + 3, g.w, u.w));
  }
}

launch::MoeTiled tiled_views(const TiledLayout& l, void* workspace) {
  char* ws = static_cast<char*>(workspace);
  void** ptrs = reinterpret_cast<void**>(ws + l.ptrs);
  launch::MoeTiled v;
  v.max_tiles = l.max_tiles;
  v.rows = l.tile;
  v.gate_up = {ptrs + 2 * l.max_tiles, ptrs, ptrs + l.max_tiles};
  v.down = {ptrs + 5 * l.max_tiles, ptrs + 3 * l.max_tiles, ptrs + 4 * l.max_tiles};
  return v;
}

template <typename T>
struct TiledPrepare {
  static cudaError_t run(const void* x, const void* w13, const void* w2, const int32_t* ids, int64_t tokens,
                         int64_t hidden, int64_t experts, int64_t inter, int64_t topk, int64_t tile, void* workspace,
                         cudaStream_t stream) {
    const TiledLayout l = tiled_layout_of(sizeof(T), tokens, hidden, experts, inter, topk, tile);
    char* ws = static_cast<char*>(workspace);
    const auto at = [&](size_t off) { return reinterpret_cast<int32_t*>(ws + off); };
    cudaError_t err = cudaMemsetAsync(ws + l.counts, 0, l.offsets - l.counts, stream);  // counts and cursor
    if (err != cudaSuccess) return err;
    const int e = static_cast<int>(experts);
    route_count<<<blocks_for(l.pairs), kBlock, 0, stream>>>(ids, l.pairs, e, at(l.counts));
    route_plan<<<1, 1, 0, stream>>>(at(l.counts), e, static_cast<int>(tile), at(l.offsets), at(l.first_tile),
                                    at(l.tile_expert), at(l.tile_row0), at(l.tile_rows), at(l.num_tiles));
    tiled_fill<<<blocks_for(l.pairs), kBlock, 0, stream>>>(ids, l.pairs, e, static_cast<int>(tile), at(l.first_tile),
                                                           at(l.cursor), at(l.pad_of));
    const int64_t row_vecs = hidden * static_cast<int64_t>(sizeof(T)) / 16;
    tiled_gather<<<static_cast<unsigned>(std::min<int64_t>(l.pairs, 65535)), 128, 0, stream>>>(
        reinterpret_cast<uint4*>(ws + l.a_pad), static_cast<const uint4*>(x), at(l.pad_of), l.pairs, row_vecs, topk);
    tiled_pointers<T><<<blocks_for(l.max_tiles), kBlock, 0, stream>>>(
        reinterpret_cast<void**>(ws + l.ptrs), l.max_tiles, tile, at(l.num_tiles), at(l.tile_expert),
        reinterpret_cast<const T*>(ws + l.a_pad), static_cast<const T*>(w13), static_cast<const T*>(w2),
        reinterpret_cast<float*>(ws + l.gu), reinterpret_cast<const T*>(ws + l.mid), reinterpret_cast<float*>(ws + l.y),
        hidden, inter);
    return cudaGetLastError();
  }
};

template <typename T>
struct TiledAct {
  static cudaError_t run(int64_t tokens, int64_t hidden, int64_t experts, int64_t inter, int64_t topk, int64_t tile,
                         moe::GatedAct act, void* workspace, cudaStream_t stream) {
    const TiledLayout l = tiled_layout_of(sizeof(T), tokens, hidden, experts, inter, topk, tile);
    char* ws = static_cast<char*>(workspace);
    tiled_act<T><<<blocks_for(l.rows * (inter / 4)), kBlock, 0, stream>>>(
        reinterpret_cast<T*>(ws + l.mid), reinterpret_cast<const float*>(ws + l.gu),
        reinterpret_cast<const int32_t*>(ws + l.num_tiles), reinterpret_cast<const int32_t*>(ws + l.tile_rows),
        reinterpret_cast<const int32_t*>(ws + l.tile_expert), l.rows, l.tile, inter, act);
    return cudaGetLastError();
  }
};

template <typename T>
struct TiledCombine {
  static cudaError_t run(void* out, const float* tw, const int32_t* ids, const void* b2, int64_t tokens, int64_t hidden,
                         int64_t experts, int64_t inter, int64_t topk, int64_t tile, void* workspace,
                         cudaStream_t stream) {
    const TiledLayout l = tiled_layout_of(sizeof(T), tokens, hidden, experts, inter, topk, tile);
    char* ws = static_cast<char*>(workspace);
    moe_combine<T><<<blocks_for(tokens * hidden), kBlock, 0, stream>>>(
        static_cast<T*>(out), reinterpret_cast<const float*>(ws + l.y), tw,
        reinterpret_cast<const int32_t*>(ws + l.pad_of), ids, static_cast<const T*>(b2), tokens, hidden, experts, topk,
        1);
    return cudaGetLastError();
  }
};

}  // namespace

size_t launch::fused_moe_workspace_bytes(Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter,
                                         int64_t topk) {
  if (trivial(tokens, hidden, experts, inter, topk)) return 0;
  return layout_of(elem_size(elem), plan_of(elem, tokens, hidden, experts, inter, topk), tokens, hidden, experts, inter,
                   topk)
      .total;
}

cudaError_t launch::fused_moe(void* out, const void* hidden_states, const void* w13, const void* w2,
                              const float* topk_weights, const int32_t* topk_ids, const void* w13_bias,
                              const void* w2_bias, Elem elem, int64_t tokens, int64_t hidden, int64_t experts,
                              int64_t inter, int64_t topk, const MoeActivation& activation, bool gemv, void* workspace,
                              cudaStream_t stream) {
  const moe::GatedAct act{activation.kind, activation.alpha, activation.limit, w13_bias};
  return FK_CUDA_DISPATCH_ELEM(elem, FusedMoe, out, hidden_states, w13, w2, topk_weights, topk_ids, w2_bias, tokens,
                               hidden, experts, inter, topk, act, gemv, workspace, stream);
}

}  // namespace fk::cuda

namespace fk::cuda {

int64_t launch::fused_moe_tiled_rows(int64_t tokens, int64_t experts, int64_t topk) {
  // Each tile streams its expert's weights once: taller tiles do more FLOPs a weight byte
  // read, shorter ones waste fewer padded rows (up to tile - 1 an expert). Measured on an
  // H100 at Mixtral's prefill (1024 rows an expert, bench/RESULTS.md): 256 rows 5.90 ms,
  // 512 rows 6.05, 128 rows 8.10; 128 where an expert has fewer than 512 rows.
  const int64_t rows_per_expert = experts > 0 ? tokens * topk / experts : 0;
  return rows_per_expert >= 512 ? 256 : 128;
}

bool launch::fused_moe_tiled_fits(Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter,
                                  int64_t topk, int64_t tile) {
  if (trivial(tokens, hidden, experts, inter, topk) || !tile_rows_ok(tile)) return false;
  const Plan plan = plan_of(elem, tokens, hidden, experts, inter, topk);
  const int64_t pairs = tokens * topk;
  return plan.mma && plan.bm == 128 && pairs <= INT_MAX && experts <= INT_MAX &&
         max_tiles_of(pairs, experts, static_cast<int>(tile)) * tile <= INT_MAX;
}

size_t launch::fused_moe_tiled_workspace_bytes(Elem elem, int64_t tokens, int64_t hidden, int64_t experts,
                                               int64_t inter, int64_t topk, int64_t tile) {
  return tiled_layout_of(elem_size(elem), tokens, hidden, experts, inter, topk, tile).total;
}

launch::MoeTiled launch::fused_moe_tiled_views(Elem elem, int64_t tokens, int64_t hidden, int64_t experts,
                                               int64_t inter, int64_t topk, int64_t tile, void* workspace) {
  return tiled_views(tiled_layout_of(elem_size(elem), tokens, hidden, experts, inter, topk, tile), workspace);
}

cudaError_t launch::fused_moe_tiled_prepare(const void* hidden_states, const void* w13, const void* w2,
                                            const int32_t* topk_ids, Elem elem, int64_t tokens, int64_t hidden,
                                            int64_t experts, int64_t inter, int64_t topk, int64_t tile, void* workspace,
                                            cudaStream_t stream) {
  if (elem == Elem::kF32 || !tile_rows_ok(tile)) return cudaErrorInvalidValue;
  return FK_CUDA_DISPATCH_ELEM(elem, TiledPrepare, hidden_states, w13, w2, topk_ids, tokens, hidden, experts, inter,
                               topk, tile, workspace, stream);
}

cudaError_t launch::fused_moe_tiled_act(Elem elem, int64_t tokens, int64_t hidden, int64_t experts, int64_t inter,
                                        int64_t topk, int64_t tile, const MoeActivation& activation,
                                        const void* w13_bias, void* workspace, cudaStream_t stream) {
  if (elem == Elem::kF32 || !tile_rows_ok(tile)) return cudaErrorInvalidValue;
  const moe::GatedAct act{activation.kind, activation.alpha, activation.limit, w13_bias};
  return FK_CUDA_DISPATCH_ELEM(elem, TiledAct, tokens, hidden, experts, inter, topk, tile, act, workspace, stream);
}

cudaError_t launch::fused_moe_tiled_combine(void* out, const float* topk_weights, const int32_t* topk_ids,
                                            const void* w2_bias, Elem elem, int64_t tokens, int64_t hidden,
                                            int64_t experts, int64_t inter, int64_t topk, int64_t tile, void* workspace,
                                            cudaStream_t stream) {
  if (elem == Elem::kF32 || !tile_rows_ok(tile)) return cudaErrorInvalidValue;
  return FK_CUDA_DISPATCH_ELEM(elem, TiledCombine, out, topk_weights, topk_ids, w2_bias, tokens, hidden, experts, inter,
                               topk, tile, workspace, stream);
}

}  // namespace fk::cuda
