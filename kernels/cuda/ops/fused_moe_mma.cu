// The tensor-core grouped GEMMs of the CUDA fused_moe baseline (fp16/bf16, sm_80+): one
// kernel for the gate/up GEMM (activation and product in its epilogue) and the down GEMM,
// over the expert tiles that routing planned on the device (fused_moe.cuh).
//
// A block computes BM rows x 128 columns of one tile with 8 warps, mma.sync m16n8k16
// with fp32 accumulators, K through a multi-stage cp.async pipeline (Tiling). A rows
// are gathered (each row its own source: the pair's token row of hidden_states, or the
// pair's row of mid), so a tile needs no copy of its inputs. Shared-memory rows are
// XOR-swizzled in 16-byte chunks (swz) so ldmatrix meets no bank conflicts.
//
// The gated GEMM's 128 block columns are 64 gate and 64 up columns interleaved by 8
// (columns 16 g + w: gate j = 8 g + w for w < 8, up j = 8 g + w - 8 otherwise), so a
// thread's accumulators of an even n8 tile and the next one are the gate and up values
// of the same (row, j): the epilogue writes mid = round(gated(gate, up)) straight from
// registers. The down GEMM writes fp32 partial sums, one slice per K split (decode's
// few tiles would leave most SMs idle without them); the combine step adds the slices
// in order, so the result does not depend on scheduling.
//
// Blocks run in groups of 8 tiles: the 8 tiles (mostly one expert's) sweep the column
// blocks together, so each expert's weight panel is read from memory about once per
// group and the group's gathered rows stay in L2.
#include "kernels/cuda/ops/fused_moe.cuh"
#include "kernels/cuda/ops/mma.cuh"

namespace fk::cuda::moe {
namespace {

constexpr int kBN = kMmaBlockCols, kThreads = 256, kGroup = 8;

// 16-row tiles (decode: a few rows an expert, bound by the weights' bytes) take K in
// steps of 128, so each weight row is read 256 contiguous bytes at a time, 3 stages
// deep; the others K steps of 32, 4 stages deep.
template <int BM>
struct Tiling {
  static constexpr int kBK = BM == 16 ? 128 : 32, kStages = BM == 16 ? 3 : 4;
  static constexpr int kChunks = kBK / 8;  // 16-byte chunks a row of a stage
  static constexpr int kWarpsM = BM >= 64 ? 2 : 1, kWarpsN = 8 / kWarpsM;
  static constexpr int kWM = BM / kWarpsM, kWN = kBN / kWarpsN;  // one warp's rows and columns
  static constexpr int kMT = kWM / 16, kNT = kWN / 8;            // its m16 and n8 tiles
  static constexpr int kStageElems = (BM + kBN) * kBK;
  static constexpr size_t kSmem = static_cast<size_t>(kStages) * kStageElems * 2;
  static_assert(kNT % 2 == 0, "B fragments are loaded two n8 tiles at a time");
};

// Element offset of 16-byte chunk `chunk` of row `row` in a [rows][BK] tile. 64-byte
// rows (BK 32) XOR the chunk with (row / 2) % 4, longer ones with row % 8: either way
// the 8 rows one ldmatrix reads at one chunk fall in 8 distinct bank groups.
template <int BK>
__device__ __forceinline__ int swz(int row, int chunk) {
  if constexpr (BK == 32) return row * BK + ((chunk ^ ((row >> 1) & 3)) << 3);
  return row * BK + ((chunk ^ (row & 7)) << 3);
}

template <typename T>
__device__ __forceinline__ void store2(T* p, float lo, float hi) {
  *reinterpret_cast<uint32_t*>(p) = dev::Mma<T>::pack(lo, hi);
}

template <typename T, int BM, bool kGated>
__global__ void __launch_bounds__(kThreads) moe_mma(MmaGemm g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using TL = Tiling<BM>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  __shared__ const T* arow[BM];
  __shared__ const T* brow[kBN];

  const int64_t nblk = kGated ? (g.n + kBN / 2 - 1) / (kBN / 2) : (g.n + kBN - 1) / kBN;
  const int64_t per_group = static_cast<int64_t>(kGroup) * nblk;
  const int64_t bid = blockIdx.x, within = bid % per_group;
  const int64_t tile = bid / per_group * kGroup + within % kGroup, nb = within / kGroup;
  if (tile >= *g.route.num_tiles) return;  // the grid is sized for the most tiles possible
  const int e = g.route.tile_expert[tile], row0 = g.route.tile_row0[tile], rows = g.route.tile_rows[tile];
  const int tid = threadIdx.x;
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  for (int i = tid; i < BM; i += kThreads) {
    const T* p = nullptr;
    if (i < rows) {
      const int64_t pos = row0 + i;
      p = kGated ? a + static_cast<size_t>(g.route.sorted[pos] / g.topk) * g.k : a + static_cast<size_t>(pos) * g.k;
    }
    arow[i] = p;
  }
  for (int c = tid; c < kBN; c += kThreads) {
    const T* p = nullptr;
    if (kGated) {
      const int64_t j = nb * (kBN / 2) + (c / 16) * 8 + c % 8;
      if (j < g.n) p = b + (static_cast<size_t>(e) * 2 * g.n + (c % 16 < 8 ? j : g.n + j)) * g.k;
    } else {
      const int64_t q = nb * kBN + c;
      if (q < g.n) p = b + (static_cast<size_t>(e) * g.n + q) * g.k;
    }
    brow[c] = p;
  }
  __syncthreads();

  // This block's share of K (its split), in tiles of kBK.
  constexpr int kBK = TL::kBK, kStages = TL::kStages, kChunks = TL::kChunks;
  const int64_t ktiles = (g.k + kBK - 1) / kBK, per = (ktiles + g.splits - 1) / g.splits;
  const int64_t kt0 = static_cast<int64_t>(blockIdx.y) * per;
  const int nk = static_cast<int>(ktiles - kt0 < per ? (ktiles > kt0 ? ktiles - kt0 : 0) : per);

  const auto load = [&](int stage, int64_t kt) {
    T* as = smem + stage * TL::kStageElems;
    T* bs = as + BM * kBK;
    const int64_t k0 = kt * kBK;
    for (int i = tid; i < BM * kChunks; i += kThreads) {
      const int r = i / kChunks, ch = i % kChunks;
      const int64_t kk = k0 + ch * 8;
      const bool ok = arow[r] != nullptr && kk < g.k;
      dev::cp_async16(as + swz<kBK>(r, ch), ok ? arow[r] + kk : b, ok);
    }
    for (int i = tid; i < kBN * kChunks; i += kThreads) {
      const int r = i / kChunks, ch = i % kChunks;
      const int64_t kk = k0 + ch * 8;
      const bool ok = brow[r] != nullptr && kk < g.k;
      dev::cp_async16(bs + swz<kBK>(r, ch), ok ? brow[r] + kk : b, ok);
    }
  };

  const int lane = tid & 31, warp = tid >> 5;
  const int wm = warp / TL::kWarpsN, wn = warp % TL::kWarpsN;
  float acc[TL::kMT][TL::kNT][4] = {};
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < nk) load(s, kt0 + s);
    dev::cp_async_commit();
  }
  for (int i = 0; i < nk; ++i) {
    dev::cp_async_wait<kStages - 2>();
    __syncthreads();  // stage i landed for every thread; stage i - 1 is consumed by all
    if (i + kStages - 1 < nk) load((i + kStages - 1) % kStages, kt0 + i + kStages - 1);
    dev::cp_async_commit();
    const T* as = smem + (i % kStages) * TL::kStageElems;
    const T* bs = as + BM * kBK;
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      uint32_t af[TL::kMT][4], bf[TL::kNT][2];
#pragma unroll
      for (int mt = 0; mt < TL::kMT; ++mt)
        dev::ldsm_x4(af[mt], as + swz<kBK>(wm * TL::kWM + mt * 16 + (lane & 15), kk * 2 + (lane >> 4)));
#pragma unroll
      for (int np = 0; np < TL::kNT / 2; ++np) {
        uint32_t r[4];
        dev::ldsm_x4(
            r, bs + swz<kBK>(wn * TL::kWN + np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1)));
        bf[2 * np][0] = r[0];
        bf[2 * np][1] = r[1];
        bf[2 * np + 1][0] = r[2];
        bf[2 * np + 1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < TL::kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < TL::kNT; ++nt) dev::Mma<T>::run(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1]);
    }
  }
  dev::cp_async_wait<0>();

#pragma unroll
  for (int mt = 0; mt < TL::kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = wm * TL::kWM + mt * 16 + (lane >> 2) + h * 8;
      if (r >= rows) continue;
      const size_t pos = static_cast<size_t>(row0 + r);
      if (kGated) {
#pragma unroll
        for (int nt = 0; nt < TL::kNT; nt += 2) {
          const int64_t j = nb * (kBN / 2) + ((wn * TL::kWN + nt * 8) / 16) * 8 + (lane & 3) * 2;
          if (j >= g.n) continue;  // n % 8 == 0: j + 1 < n with j
          const float* gate = acc[mt][nt] + 2 * h;
          const float* up = acc[mt][nt + 1] + 2 * h;
          store2(static_cast<T*>(g.dst) + pos * g.n + j, gated<T>(g.act, e, g.n, j, gate[0], up[0]),
                 gated<T>(g.act, e, g.n, j + 1, gate[1], up[1]));
        }
      } else {
        float* y = static_cast<float*>(g.dst) + (static_cast<size_t>(blockIdx.y) * g.pairs + pos) * g.n;
#pragma unroll
        for (int nt = 0; nt < TL::kNT; ++nt) {
          const int64_t q = nb * kBN + wn * TL::kWN + nt * 8 + (lane & 3) * 2;
          if (q < g.n) *reinterpret_cast<float2*>(y + q) = make_float2(acc[mt][nt][2 * h], acc[mt][nt][2 * h + 1]);
        }
      }
    }
#else
  __trap();  // fused_moe.cu takes this path only on sm_80+
#endif
}

template <typename T, int BM, bool kGated>
cudaError_t launch(const MmaGemm& g, cudaStream_t stream) {
  constexpr size_t smem = Tiling<BM>::kSmem;
  // Past 48 KB per block (the row pointers' static arrays included) the dynamic part
  // must be allowed explicitly.
  if (smem + (BM + kBN) * sizeof(void*) > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(moe_mma<T, BM, kGated>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  const int64_t nblk = kGated ? (g.n + kBN / 2 - 1) / (kBN / 2) : (g.n + kBN - 1) / kBN;
  const int64_t blocks = (g.max_tiles + kGroup - 1) / kGroup * kGroup * nblk;
  if (blocks > 0x7fffffff || g.splits < 1 || g.splits > 65535) return cudaErrorInvalidValue;
  moe_mma<T, BM, kGated>
      <<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(g.splits)), kThreads, smem, stream>>>(g);
  return cudaGetLastError();
}

template <typename T, bool kGated>
cudaError_t launch_bm(int bm, const MmaGemm& g, cudaStream_t stream) {
  if (bm == 16) return launch<T, 16, kGated>(g, stream);
  if (bm == 64) return launch<T, 64, kGated>(g, stream);
  if (bm == 128) return launch<T, 128, kGated>(g, stream);
  return cudaErrorInvalidValue;
}

template <typename T>
cudaError_t launch_t(bool gated, int bm, const MmaGemm& g, cudaStream_t stream) {
  return gated ? launch_bm<T, true>(bm, g, stream) : launch_bm<T, false>(bm, g, stream);
}

}  // namespace

cudaError_t mma_gemm(launch::Elem elem, bool gated, int bm, const MmaGemm& g, cudaStream_t stream) {
  if (elem == launch::Elem::kBF16) return launch_t<__nv_bfloat16>(gated, bm, g, stream);
  if (elem == launch::Elem::kF16) return launch_t<__half>(gated, bm, g, stream);
  return cudaErrorInvalidValue;
}

}  // namespace fk::cuda::moe
