// Tensor-core split-KV attention for one query position per sequence (a decode step,
// q_len == 1), fp16/bf16, sm_80+. A block owns one sequence b, one KV head and one
// split of the keys; its 16 query rows are the heads of the KV head's group (up to
// 16; the rest zero), so the group shares every K/V tile and the scores of a tile are
// mma.sync m16n8k16 products, not per-lane dot products.
//
// The block's kWarps warps take the split's key tiles of kBK keys in turn (warp w:
// tiles w, w + kWarps, ...). Each warp streams its tiles through kBuffers shared-
// memory buffers of its own by cp.async (the next two land while one is scored), keeps
// Q's fragments in registers, and runs the flash kernel's online softmax (fp32, log2
// domain) over its tiles: S = Q K^T, P rounded to the element type, O += P V. At the
// end the warps' (max, sum, O) are merged in shared memory; one split writes the
// output, several write partials (attention_split.cu) that a second kernel merges.
// Masking: every key of a split is visible (decode, [first_key, end_key)); keys past
// the split's end score -inf. head_dim is a multiple of 8, padded to 64, 128 or 256.
#include "kernels/cuda/ops/attention.cuh"
#include "kernels/cuda/ops/attention_launch.h"
#include "kernels/cuda/ops/cp_async.cuh"
#include "kernels/cuda/ops/mma.cuh"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kRows = 16;  // one m16 tile: the group's heads
constexpr int kBK = 16;    // keys a tile
constexpr int kPad = 8;    // elements added to each shared-memory row
constexpr int kBuffers = 3;  // a warp's tile buffers: kBuffers - 1 tiles in flight

// Q [kRows][LD], then per warp K [kBuffers][kBK][LD] and V [kBuffers][kBK][LD]
// (elements of 2 bytes).
template <int DP>
constexpr size_t shared_bytes() {
  return sizeof(uint16_t) * static_cast<size_t>(kRows + kWarps * 2 * kBuffers * kBK) * (DP + kPad);
}

template <typename T, int DP>
__global__ void __launch_bounds__(kThreads)
    decode_mma_kernel(T* __restrict__ out, float* __restrict__ part_o, float* __restrict__ part_ml,
                      const T* __restrict__ q, const T* __restrict__ kc, const T* __restrict__ vc, AttentionGeometry g,
                      DecodeSplit sp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int LD = DP + kPad;
  constexpr int kChunks = DP / 8;  // 16-byte chunks a row
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* qs = reinterpret_cast<T*>(smem_raw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* kb = qs + kRows * LD + warp * 2 * kBuffers * kBK * LD;  // [kBuffers][kBK][LD]
  T* vb = kb + kBuffers * kBK * LD;                          // [kBuffers][kBK][LD]

  const int64_t b = blockIdx.x, kvh = blockIdx.y, s = blockIdx.z;
  const int64_t p = g.q_start;  // q_len == 1
  const int64_t ja = g.first_key(p) + s * sp.chunk;
  const int64_t jb = ja + sp.chunk < g.end_key(p) ? ja + sp.chunk : g.end_key(p);
  const int64_t tiles = (jb - ja + kBK - 1) / kBK;
  const int nh = static_cast<int>(g.group);  // <= kRows (attention_decode_mma_fits)

  for (int c = threadIdx.x; c < kRows * kChunks; c += kThreads) {
    const int r = c / kChunks, e = (c % kChunks) * 8;
    const bool valid = r < nh && e < g.d;
    const T* src = valid ? q + ((static_cast<size_t>(b) * g.q_heads + kvh * g.group + r) * g.d + e) : q;
    dev::cp_async16(qs + r * LD + e, src, valid);
  }
  dev::cp_async_commit();
  // Tile t of the split into buffer `buf` of this warp (rows past jb, dims past d: 0).
  auto load = [&](int64_t t, int buf) {
    const int64_t kt = ja + t * kBK;
    for (int c = lane; c < kBK * kChunks; c += 32) {
      const int jj = c / kChunks, e = (c % kChunks) * 8;
      const int64_t j = kt + jj;
      const bool valid = j < jb && e < g.d;
      const size_t off = valid ? ((static_cast<size_t>(b) * g.cache_len + j) * g.kv_heads + kvh) * g.d + e : 0;
      dev::cp_async16(kb + (buf * kBK + jj) * LD + e, kc + off, valid);
      dev::cp_async16(vb + (buf * kBK + jj) * LD + e, vc + off, valid);
    }
  };
#pragma unroll
  for (int i = 0; i < kBuffers - 1; ++i) {
    if (warp + i * kWarps < tiles) load(warp + i * kWarps, i);
    dev::cp_async_commit();  // (possibly empty) group: the waits count groups
  }
  dev::cp_async_wait<kBuffers - 1>();  // Q is in (this thread's part)
  __syncthreads();
  uint32_t aq[DP / 16][4];
#pragma unroll
  for (int kk = 0; kk < DP / 16; ++kk)
    dev::ldsm_x4(aq[kk], qs + ((lane % 8) + ((lane / 8) % 2) * 8) * LD + kk * 16 + (lane / 16) * 8);

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[DP / 8][4];
#pragma unroll
  for (int n = 0; n < DP / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;

  int buf = 0;  // tile t's buffer: (its turn among the warp's tiles) % kBuffers
  for (int64_t t = warp; t < tiles; t += kWarps) {
    // The tile kBuffers - 1 turns on goes to the buffer of the previous turn, which
    // every lane of the warp has finished reading (the __syncwarp below).
    const int64_t ahead = t + (kBuffers - 1) * kWarps;
    if (ahead < tiles) load(ahead, buf == 0 ? kBuffers - 1 : buf - 1);
    dev::cp_async_commit();
    dev::cp_async_wait<kBuffers - 1>();
    __syncwarp();  // every lane's copies of tile t are in and visible to the warp
    const T* kt_s = kb + buf * kBK * LD;
    const T* vt_s = vb + buf * kBK * LD;

    float sc[kBK / 8][4];
#pragma unroll
    for (int n = 0; n < kBK / 8; ++n) sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < DP / 16; ++kk)
#pragma unroll
      for (int n2 = 0; n2 < kBK / 16; ++n2) {
        uint32_t bk[4];
        dev::ldsm_x4(bk, kt_s + (n2 * 16 + (lane % 8) + (lane / 16) * 8) * LD + kk * 16 + ((lane / 8) % 2) * 8);
        dev::Mma<T>::run(sc[2 * n2], aq[kk], bk[0], bk[1]);
        dev::Mma<T>::run(sc[2 * n2 + 1], aq[kk], bk[2], bk[3]);
      }

    // The keys past the split are masked; online softmax of the two rows this thread
    // holds, then O += P V.
    const int64_t kt = ja + t * kBK;
    const int valid_keys = static_cast<int>(jb - kt < kBK ? jb - kt : kBK);
    const int lo[2] = {0, 0}, hi[2] = {valid_keys, valid_keys};
    dev::online_softmax_tile(sc, o, m, l, lo, hi, g.scale, g.softcap);
    dev::accumulate_pv<T, kBK, DP, LD>(o, sc, vt_s);
    __syncwarp();  // every lane is done with buffer `buf` before it is refilled
    buf = buf + 1 == kBuffers ? 0 : buf + 1;
  }
  dev::cp_async_wait<0>();
  __syncthreads();  // the buffers are reused below

  // The warps' (max, sum, O) of each row, then their merge: thread per (row, dim).
  float* wm = reinterpret_cast<float*>(smem_raw);  // [kWarps][kRows] max (log2 domain)
  float* wl = wm + kWarps * kRows;                  // [kWarps][kRows] sum
  float* wo = wl + kWarps * kRows;                  // [kWarps][kRows][DP] unnormalised O
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = lane / 4 + half * 8;
    if (lane % 4 == 0) {
      wm[warp * kRows + r] = m[half];
      wl[warp * kRows + r] = l[half];
    }
#pragma unroll
    for (int n = 0; n < DP / 8; ++n) {
      const int e = n * 8 + (lane % 4) * 2;
      wo[(warp * kRows + r) * DP + e] = o[n][half * 2];
      wo[(warp * kRows + r) * DP + e + 1] = o[n][half * 2 + 1];
    }
  }
  __syncthreads();
  constexpr float kLn2 = 0.6931471805599453f;
  for (int c = threadIdx.x; c < nh * g.d; c += kThreads) {
    const int r = c / g.d, e = c % g.d;
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      if (wl[w * kRows + r] > 0.f) mx = fmaxf(mx, wm[w * kRows + r]);
    float sum = 0.f, acc = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      if (wl[w * kRows + r] > 0.f) {
        const float f = exp2f(wm[w * kRows + r] - mx);
        sum += f * wl[w * kRows + r];
        acc += f * wo[(w * kRows + r) * DP + e];
      }
    const size_t row = static_cast<size_t>(b) * g.q_heads + kvh * g.group + r;
    if (sp.splits == 1) {
      const float den = sum + attention_sink_share(g, kvh * g.group + r, mx * kLn2);
      out[row * g.d + e] = dev::from_f32<T>(sum > 0.f ? acc / den : 0.f);
    } else {
      part_o[(row * sp.splits + s) * g.d + e] = acc;
      if (e == 0) {
        float* ml = part_ml + (row * sp.splits + s) * 2;
        ml[0] = sum > 0.f ? mx * kLn2 : 0.f;  // natural-log domain
        ml[1] = sum;
      }
    }
  }
#else
  __trap();  // attention_decode_mma_fits() refuses devices before sm_80
#endif
}

template <typename T, int DP>
cudaError_t launch_dp(void* out, const void* q, const void* kc, const void* vc, const AttentionGeometry& g,
                      cudaStream_t stream) {
  constexpr size_t smem = shared_bytes<DP>();
  static_assert(sizeof(float) * kWarps * kRows * (DP + 2) <= smem, "the warps' merge fits in the buffers");
  const auto kernel = decode_mma_kernel<T, DP>;
  int64_t resident = 0;
  if (const cudaError_t e = attention_resident_blocks(reinterpret_cast<const void*>(kernel), kThreads, smem, &resident);
      e != cudaSuccess)
    return e;
  // A block streams kWarps tiles at a time: splits are whole multiples of those.
  const DecodeSplitPlan plan{g.batch * g.kv_heads, resident, int64_t{kWarps} * kBK};
  return attention_decode_split(out, dev::elem_of<T>, g, plan, stream,
                                [&](float* part_o, float* part_ml, const DecodeSplit& sp) {
                                  const dim3 grid(static_cast<unsigned>(g.batch), static_cast<unsigned>(g.kv_heads),
                                                  static_cast<unsigned>(sp.splits));
                                  kernel<<<grid, kThreads, smem, stream>>>(
                                      static_cast<T*>(out), part_o, part_ml, static_cast<const T*>(q),
                                      static_cast<const T*>(kc), static_cast<const T*>(vc), g, sp);
                                  return cudaGetLastError();
                                });
}

}  // namespace

bool attention_decode_mma_fits(const void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                               const AttentionGeometry& g) {
  if (elem == launch::Elem::kF32 || g.q_len != 1 || g.d % 8 != 0 || g.d > 256 || g.group > kRows) return false;
  if (!attention_aligned16(out, q, kc, vc)) return false;
  if (g.batch > 0x7fffffff || g.kv_heads > 65535 || g.end_key(g.q_start) <= g.first_key(g.q_start)) return false;
  return attention_device().major >= 8;
}

cudaError_t attention_decode_mma(void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                                 const AttentionGeometry& g, cudaStream_t stream) {
  return with_tensor_core_types(elem, g.d, [&](auto t, auto dp) {
    return launch_dp<decltype(t), decltype(dp)::value>(out, q, kc, vc, g, stream);
  });
}

}  // namespace fk::cuda
