// Tensor-core attention for fp16/bf16 (FlashAttention-2 style, sm_80+): a block of
// kWarps warps owns one sequence b, one KV head and kBQ = 16 * kWarps query rows,
// ordered (position, query head of the group) as the general kernel in attention.cu,
// so the heads of a GQA group share every K/V tile. Each warp owns 16 rows.
//
// Per key tile of BK keys (K, V and the block's Q staged in shared memory by cp.async,
// rows padded by 8 elements so that ldmatrix is conflict-free):
//   S = Q K^T      mma.sync m16n8k16, fp32 accumulators, A and B by ldmatrix;
//   mask, scale, soft-cap, online softmax in fp32 (row max and sum over the 4 lanes
//                  that share a row), P rounded to the element type;
//   O += P V       P straight from the S accumulators (their layout is the A
//                  operand's), V by ldmatrix.trans.
// K of the next tile is loaded while P V runs, V of the next tile while S is scored.
// Masking is the CPU op's (kernels/ops/attention.cc): keys [first_key(p), end_key(p)).
// Takes head_dim <= 256 that is a multiple of 8 (padded to 64, 128 or 256 with zeros)
// and 16-byte aligned tensors.
#include "kernels/cuda/ops/attention.cuh"
#include "kernels/cuda/ops/attention_launch.h"
#include "kernels/cuda/ops/cp_async.cuh"
#include "kernels/cuda/ops/mma.cuh"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kBQ = 16 * kWarps;
constexpr int kPad = 8;  // elements added to each shared-memory row

template <int DP>
__host__ __device__ constexpr int key_tile() {
  return DP > 128 ? 32 : 64;
}

template <int DP>
__host__ __device__ constexpr size_t shared_bytes() {
  return sizeof(uint16_t) * static_cast<size_t>(kBQ + 2 * key_tile<DP>()) * (DP + kPad);
}

using dev::cp_async16;
using dev::cp_async_commit;
using dev::cp_async_wait;
using dev::ldsm_x4;
using dev::ldsm_x4_trans;
using dev::Mma;

// Stages keys [kt, kt + BK) of `cache` (rows beyond kb1 and dims beyond d as zeros).
template <typename T, int DP, int BK>
__device__ __forceinline__ void load_keys(T* dst, const T* cache, const AttentionGeometry& g, int64_t b, int64_t kvh,
                                          int64_t kt, int64_t kb1) {
  constexpr int kChunks = DP / 8;  // 16-byte chunks per row
  for (int c = threadIdx.x; c < BK * kChunks; c += kThreads) {
    const int jj = c / kChunks, e = (c % kChunks) * 8;
    const int64_t j = kt + jj;
    const bool valid = j < kb1 && e < g.d;
    const T* src = valid ? cache + ((static_cast<size_t>(b) * g.cache_len + j) * g.kv_heads + kvh) * g.d + e : cache;
    cp_async16(dst + jj * (DP + kPad) + e, src, valid);
  }
}

template <typename T, int DP>
__global__ void __launch_bounds__(kThreads)
    flash_kernel(T* __restrict__ out, const T* __restrict__ q, const T* __restrict__ kc, const T* __restrict__ vc,
                 AttentionGeometry g, int64_t tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int BK = key_tile<DP>();
  constexpr int LD = DP + kPad;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* qs = reinterpret_cast<T*>(smem_raw);  // [kBQ][LD]
  T* ks = qs + kBQ * LD;                   // [BK][LD]
  T* vs = ks + BK * LD;                    // [BK][LD]

  const int64_t b = blockIdx.x / tiles, r0 = (blockIdx.x % tiles) * kBQ, kvh = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t r_last = (r0 + kBQ < g.rows ? r0 + kBQ : g.rows) - 1;
  const int64_t kb0 = g.first_key(g.q_start + r0 / g.group), kb1 = g.end_key(g.q_start + r_last / g.group);

  // Q of the block's rows.
  constexpr int kChunks = DP / 8;
  for (int c = threadIdx.x; c < kBQ * kChunks; c += kThreads) {
    const int rr = c / kChunks, e = (c % kChunks) * 8;
    const int64_t r = r0 + rr;
    const bool valid = r < g.rows && e < g.d;
    const T* src = q;
    if (valid) {
      const int64_t t = b * g.q_len + r / g.group, h = kvh * g.group + r % g.group;
      src = q + (static_cast<size_t>(t) * g.q_heads + h) * g.d + e;
    }
    cp_async16(qs + rr * LD + e, src, valid);
  }
  cp_async_commit();
  load_keys<T, DP, BK>(ks, kc, g, b, kvh, kb0, kb1);
  cp_async_commit();
  load_keys<T, DP, BK>(vs, vc, g, b, kvh, kb0, kb1);
  cp_async_commit();

  // The two rows of this thread's accumulator fragments: warp * 16 + lane / 4 (+ 8).
  int64_t j0[2], j1[2];
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t r = r0 + warp * 16 + lane / 4 + half * 8;
    if (r < g.rows) {
      const int64_t p = g.q_start + r / g.group;
      j0[half] = g.first_key(p);
      j1[half] = g.end_key(p);
    } else {
      j0[half] = 0;
      j1[half] = 0;  // no key: the row stays empty and is not written
    }
  }
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[DP / 8][4];
#pragma unroll
  for (int n = 0; n < DP / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;

  for (int64_t kt = kb0; kt < kb1; kt += BK) {
    const bool more = kt + BK < kb1;
    cp_async_wait<1>();  // Q and K of this tile are in (V may still be on its way)
    __syncthreads();
    float s[BK / 8][4];
#pragma unroll
    for (int n = 0; n < BK / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < DP / 16; ++kk) {
      uint32_t a[4];
      ldsm_x4(a, qs + (warp * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * LD + kk * 16 + (lane / 16) * 8);
#pragma unroll
      for (int n2 = 0; n2 < BK / 16; ++n2) {
        uint32_t bk[4];
        ldsm_x4(bk, ks + (n2 * 16 + (lane % 8) + (lane / 16) * 8) * LD + kk * 16 + ((lane / 8) % 2) * 8);
        Mma<T>::run(s[2 * n2], a, bk[0], bk[1]);
        Mma<T>::run(s[2 * n2 + 1], a, bk[2], bk[3]);
      }
    }
    __syncthreads();  // every warp is done with K of this tile
    if (more) load_keys<T, DP, BK>(ks, kc, g, b, kvh, kt + BK, kb1);
    cp_async_commit();  // (possibly empty) group: the waits below count groups

    // Mask, scale, soft-cap; the running max and sum of each row (log2 domain). Key
    // offsets within the tile are 32-bit; a tile the row sees whole skips the mask.
    int lo[2], hi[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int64_t lo64 = j0[half] - kt, hi64 = j1[half] - kt;
      lo[half] = lo64 < 0 ? 0 : (lo64 > BK ? BK : static_cast<int>(lo64));
      hi[half] = hi64 < 0 ? 0 : (hi64 > BK ? BK : static_cast<int>(hi64));
    }
    dev::online_softmax_tile(s, o, m, l, lo, hi, g.scale, g.softcap);

    if (more) {
      cp_async_wait<1>();  // V of this tile is in; K of the next may still be loading
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    dev::accumulate_pv<T, BK, DP, LD>(o, s, vs);
    __syncthreads();  // every warp is done with V of this tile
    if (more) load_keys<T, DP, BK>(vs, vc, g, b, kvh, kt + BK, kb1);
    cp_async_commit();
  }
  cp_async_wait<0>();

#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int64_t r = r0 + warp * 16 + lane / 4 + half * 8;
    if (r >= g.rows) continue;
    const int64_t t = b * g.q_len + r / g.group, h = kvh * g.group + r % g.group;
    T* orow = out + (static_cast<size_t>(t) * g.q_heads + h) * g.d;
    constexpr float kLn2 = 0.6931471805599453f;  // m is in the log2 domain
    const float inv = l[half] > 0.f ? 1.f / (l[half] + attention_sink_share(g, h, m[half] * kLn2)) : 0.f;
#pragma unroll
    for (int n = 0; n < DP / 8; ++n) {
      const int e = n * 8 + (lane % 4) * 2;
      if (e < g.d) {
        const uint32_t v = Mma<T>::pack(o[n][half * 2] * inv, o[n][half * 2 + 1] * inv);
        *reinterpret_cast<uint32_t*>(orow + e) = v;
      }
    }
  }
#else
  __trap();  // attention_flash_fits() refuses devices before sm_80
#endif
}

template <typename T, int DP>
cudaError_t launch_dp(void* out, const void* q, const void* kc, const void* vc, const AttentionGeometry& g,
                      cudaStream_t stream) {
  const int64_t tiles = (g.rows + kBQ - 1) / kBQ;
  constexpr size_t smem = shared_bytes<DP>();
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(flash_kernel<T, DP>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  const dim3 grid(static_cast<unsigned>(g.batch * tiles), static_cast<unsigned>(g.kv_heads));
  flash_kernel<T, DP><<<grid, kThreads, smem, stream>>>(static_cast<T*>(out), static_cast<const T*>(q),
                                                        static_cast<const T*>(kc), static_cast<const T*>(vc), g, tiles);
  return cudaGetLastError();
}

}  // namespace

bool attention_flash_fits(const void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                          const AttentionGeometry& g) {
  if (elem == launch::Elem::kF32 || g.d % 8 != 0 || g.d > 256) return false;
  if (!attention_aligned16(out, q, kc, vc)) return false;
  const int64_t tiles = (g.rows + kBQ - 1) / kBQ;
  if (g.batch * tiles > 0x7fffffff) return false;
  return attention_device().major >= 8;
}

cudaError_t attention_flash(void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                            const AttentionGeometry& g, cudaStream_t stream) {
  return with_tensor_core_types(elem, g.d, [&](auto t, auto dp) {
    return launch_dp<decltype(t), decltype(dp)::value>(out, q, kc, vc, g, stream);
  });
}

}  // namespace fk::cuda
