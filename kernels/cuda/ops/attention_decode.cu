// Split-KV attention for one query position per sequence (a decode step, q_len == 1)
// on CUDA cores: fp32, head sizes that are not a multiple of 8 elements and groups of
// more than 16 heads (fp16/bf16 within those take attention_decode_mma.cu). Memory-
// bound, so every SM must keep enough K/V bytes in flight. A block owns one sequence
// b, one KV head, up to HB query heads of its group (so K/V are read once for the
// heads that share them) and one split: a contiguous range of the keys the query
// sees. LK lanes hold one key's row as 16-byte packs; the block's 128 threads are
// 128 / LK key groups, each taking every (128 / LK)-th key of a tile.
//
// K and V tiles stream through kStages shared-memory stages by cp.async: while a tile
// is scored, the next kStages - 1 are on their way. Each thread copies the packs it
// will read itself, so staging needs no barrier. Per tile:
//   scores  each key group dots its keys with the heads' queries (fp32); the LK lanes
//           reduce-scatter the HB dot products (a lane ends with one head's sum), so
//           a key costs HB - 1 + log2(LK / HB) shuffles, not HB log2(LK);
//   softmax one warp per head: tile max, running max and sum (online softmax, fp32);
//   P V     each thread accumulates its keys' V packs into HB x pack fp32 sums.
// At the end the key groups' sums are added in shared memory. One split writes the
// output; several write partials that attention_split.cu merges. The split count
// fills the waves of the blocks the device holds at once (occupancy), in whole tiles.
#include "kernels/cuda/ops/attention.cuh"
#include "kernels/cuda/ops/attention_launch.h"
#include "kernels/cuda/ops/cp_async.cuh"
#include "kernels/cuda/ops/row.cuh"

#include <cstdint>

namespace fk::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kKeysPerThread = 4;  // keys each key group takes per tile
constexpr int kStages = 3;         // tiles in shared memory, kStages - 1 of them in flight
// Shared memory of the stages: K and V packs of every thread's keys.
constexpr size_t kStageBytes = 2 * kKeysPerThread * kThreads * 16;
constexpr size_t kDynamicSmem = kStages * kStageBytes;

// Reduce-scatter of HB per-lane values over the LK lanes of a key group: returns the
// sum over the group of the value of head decode_head<LK, HB>(sub) (HB <= LK). The
// first log2(HB) steps halve the live values (a lane keeps one half, sends the other
// to its partner); the rest add whole sums.
template <int HB, int LK>
__device__ __forceinline__ float reduce_scatter(float (&d)[HB], int sub) {
  int n = HB;
#pragma unroll
  for (int o = LK / 2; o > 0; o >>= 1) {
    if (n > 1) {
      const bool upper = (sub & o) != 0;
      const int half = n / 2;
#pragma unroll
      for (int i = 0; i < HB / 2; ++i)
        if (i < half) {
          const float send = upper ? d[i] : d[i + half];
          const float keep = upper ? d[i + half] : d[i];
          d[i] = keep + __shfl_xor_sync(0xffffffffu, send, o);
        }
      n = half;
    } else {
      d[0] += __shfl_xor_sync(0xffffffffu, d[0], o);
    }
  }
  return d[0];
}

// The head whose sum lane `sub` of a key group holds after reduce_scatter: the upper
// log2(HB) bits of sub.
template <int HB, int LK>
__device__ __forceinline__ int decode_head(int sub) {
  int head = 0, n = HB;
#pragma unroll
  for (int o = LK / 2; o > 0; o >>= 1)
    if (n > 1) {
      if (sub & o) head += n / 2;
      n /= 2;
    }
  return head;
}

template <typename T, int LK, int HB>
__global__ void __launch_bounds__(kThreads)
    decode_kernel(T* __restrict__ out, float* __restrict__ part_o, float* __restrict__ part_ml,
                  const T* __restrict__ q, const T* __restrict__ kc, const T* __restrict__ vc, AttentionGeometry g,
                  DecodeSplit sp, int head_blocks) {
  constexpr int V = dev::kVec<T>;
  constexpr int NKG = kThreads / LK;        // key groups
  constexpr int TK = NKG * kKeysPerThread;  // keys per tile
  constexpr int W = kThreads / 32;
  static_assert(HB <= LK, "a key group reduce-scatters at most LK heads");
  using P = dev::Pack<T, V>;
  static_assert(sizeof(P) == 16, "a pack is one 16-byte copy");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  P* stages = reinterpret_cast<P*>(smem_raw);  // [kStages][K, V][kKeysPerThread][kThreads]
  __shared__ float sc[HB][TK];
  __shared__ float alpha_s[HB];
  // Running max and sum per head (natural log domain), kept by the head's warp.
  __shared__ float m_s[HB], l_s[HB];

  const int64_t b = blockIdx.x, kvh = blockIdx.y / head_blocks, hb = blockIdx.y % head_blocks, s = blockIdx.z;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int kg = tid / LK, sub = tid % LK, e0 = sub * V;
  const bool dims = e0 < g.d;
  const int64_t h0 = kvh * g.group + hb * HB;
  const int nh = static_cast<int>(g.group - hb * HB < HB ? g.group - hb * HB : HB);
  const int64_t p = g.q_start;  // q_len == 1
  const int64_t j_first = g.first_key(p), j_end = g.end_key(p);
  const int64_t ja = j_first + s * sp.chunk;
  const int64_t jb = ja + sp.chunk < j_end ? ja + sp.chunk : j_end;
  const int64_t tiles = (jb - ja + TK - 1) / TK;

  const size_t row_stride = static_cast<size_t>(g.kv_heads) * g.d;
  const T* kbase = kc + (static_cast<size_t>(b) * g.cache_len * g.kv_heads + kvh) * g.d + e0;
  const T* vbase = vc + (static_cast<size_t>(b) * g.cache_len * g.kv_heads + kvh) * g.d + e0;
  // Tile t into stage t % kStages: this thread's K and V packs of its keys.
  auto issue = [&](int64_t t) {
    P* kd = stages + (t % kStages) * 2 * kKeysPerThread * kThreads + tid;
    P* vd = kd + kKeysPerThread * kThreads;
#pragma unroll
    for (int c = 0; c < kKeysPerThread; ++c) {
      const int64_t j = ja + t * TK + kg + NKG * c;
      const bool valid = j < jb && dims;
      const size_t off = valid ? static_cast<size_t>(j) * row_stride : 0;
      dev::cp_async16(kd + c * kThreads, kbase + off, valid);
      dev::cp_async16(vd + c * kThreads, vbase + off, valid);
    }
  };
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < tiles) issue(t);
    dev::cp_async_commit();  // (possibly empty) group: the waits count groups
  }

  float qr[HB][V];
#pragma unroll
  for (int i = 0; i < HB; ++i) {
    P pk{};
    if (i < nh && dims) pk = *reinterpret_cast<const P*>(q + (static_cast<size_t>(b) * g.q_heads + h0 + i) * g.d + e0);
#pragma unroll
    for (int v = 0; v < V; ++v) qr[i][v] = dev::to_f32(pk.v[v]);
  }
  float acc[HB][V];
#pragma unroll
  for (int i = 0; i < HB; ++i)
#pragma unroll
    for (int v = 0; v < V; ++v) acc[i][v] = 0.f;
  if (tid < HB) m_s[tid] = -INFINITY, l_s[tid] = 0.f;
  __syncthreads();

  const int my_head = decode_head<HB, LK>(sub);
  const bool writer = (sub & (LK / HB - 1)) == 0;  // one lane per head and key group
  for (int64_t t = 0; t < tiles; ++t) {
    dev::cp_async_wait<kStages - 2>();  // this thread's packs of tile t are in
    // The stage tile t + kStages - 1 goes to held tile t - 1, which this thread has
    // read (no other thread reads it).
    if (t + kStages - 1 < tiles) issue(t + kStages - 1);
    dev::cp_async_commit();
    const P* kd = stages + (t % kStages) * 2 * kKeysPerThread * kThreads + tid;
    const P* vd = kd + kKeysPerThread * kThreads;
    const int64_t kt = ja + t * TK;

    // Scores of this tile's keys.
#pragma unroll
    for (int c = 0; c < kKeysPerThread; ++c) {
      const P kp = kd[c * kThreads];
      float dot[HB];
#pragma unroll
      for (int i = 0; i < HB; ++i) {
        dot[i] = 0.f;
#pragma unroll
        for (int v = 0; v < V; ++v) dot[i] += qr[i][v] * dev::to_f32(kp.v[v]);
      }
      const float sum = reduce_scatter<HB, LK>(dot, sub);
      if (writer) {
        const int jj = kg + NKG * c;
        float sv = sum * g.scale;
        if (g.softcap > 0.f) sv = g.softcap * tanhf(sv / g.softcap);
        sc[my_head][jj] = kt + jj < jb && my_head < nh ? sv : -INFINITY;
      }
    }
    __syncthreads();
    // Softmax of the tile, one warp per head.
    for (int i = warp; i < HB; i += W) {
      float mx = -INFINITY;
      for (int jj = lane; jj < TK; jj += 32) mx = fmaxf(mx, sc[i][jj]);
      mx = dev::warp_max(mx);
      const float mo = m_s[i];
      const float m_new = fmaxf(mo, mx);
      const float base = m_new == -INFINITY ? 0.f : m_new;  // no visible key yet
      float sum = 0.f;
      for (int jj = lane; jj < TK; jj += 32) {
        const float pv = expf(sc[i][jj] - base);
        sc[i][jj] = pv;
        sum += pv;
      }
      sum = dev::warp_sum(sum);
      if (lane == 0) {
        const float a = expf(mo - base);
        alpha_s[i] = a;
        l_s[i] = l_s[i] * a + sum;
        m_s[i] = m_new;
      }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < HB; ++i) {
      const float a = alpha_s[i];
#pragma unroll
      for (int v = 0; v < V; ++v) acc[i][v] *= a;
    }
    // P V.
#pragma unroll
    for (int c = 0; c < kKeysPerThread; ++c) {
      const int jj = kg + NKG * c;
      const P vp = vd[c * kThreads];
#pragma unroll
      for (int i = 0; i < HB; ++i) {
        const float pv = sc[i][jj];
#pragma unroll
        for (int v = 0; v < V; ++v) acc[i][v] += pv * dev::to_f32(vp.v[v]);
      }
    }
    __syncthreads();  // sc is rewritten by the next tile
  }
  dev::cp_async_wait<0>();
  __syncthreads();  // red below reuses the stages

  // Add the key groups' sums, head by head, and write.
  float (*red)[LK * V] = reinterpret_cast<float (*)[LK * V]>(smem_raw);  // [NKG][LK * V]
  static_assert(sizeof(float) * NKG * LK * V <= kDynamicSmem, "the key groups' sums fit in the stages");
  const int64_t row0 = b * g.q_heads + h0;  // output row of head h0 (q_len == 1)
#pragma unroll
  for (int i = 0; i < HB; ++i) {
    if (i >= nh) break;
#pragma unroll
    for (int v = 0; v < V; ++v) red[kg][sub * V + v] = acc[i][v];
    __syncthreads();
    for (int e = tid; e < g.d; e += kThreads) {
      float sum = 0.f;
#pragma unroll
      for (int k = 0; k < NKG; ++k) sum += red[k][e];
      if (sp.splits == 1) {
        const float den = l_s[i] + attention_sink_share(g, h0 + i, m_s[i]);
        out[static_cast<size_t>(row0 + i) * g.d + e] = dev::from_f32<T>(l_s[i] > 0.f ? sum / den : 0.f);
      } else {
        part_o[(static_cast<size_t>(row0 + i) * sp.splits + s) * g.d + e] = sum;
      }
    }
    if (sp.splits > 1 && tid == 0) {
      float* ml = part_ml + (static_cast<size_t>(row0 + i) * sp.splits + s) * 2;
      ml[0] = m_s[i];
      ml[1] = l_s[i];
    }
    __syncthreads();
  }
}

int lanes_per_key(int d, int vec) {
  const int need = (d + vec - 1) / vec;
  for (int lk = 8; lk <= 32; lk *= 2)
    if (need <= lk) return lk;
  return 0;
}

int heads_per_block(int64_t group) { return group >= 8 ? 8 : (group > 2 ? 4 : 2); }

template <typename T, int LK, int HB>
cudaError_t launch_lk_hb(void* out, const void* q, const void* kc, const void* vc, const AttentionGeometry& g,
                         cudaStream_t stream) {
  const int head_blocks = static_cast<int>((g.group + HB - 1) / HB);
  const auto kernel = decode_kernel<T, LK, HB>;
  int64_t resident = 0;
  if (const cudaError_t e = attention_resident_blocks(reinterpret_cast<const void*>(kernel), kThreads, kDynamicSmem,
                                                      &resident);
      e != cudaSuccess)
    return e;
  constexpr int64_t kTileKeys = (kThreads / LK) * kKeysPerThread;
  const DecodeSplitPlan plan{g.batch * g.kv_heads * head_blocks, resident, kTileKeys};
  return attention_decode_split(out, dev::elem_of<T>, g, plan, stream,
                                [&](float* part_o, float* part_ml, const DecodeSplit& sp) {
                                  const dim3 grid(static_cast<unsigned>(g.batch),
                                                  static_cast<unsigned>(g.kv_heads * head_blocks),
                                                  static_cast<unsigned>(sp.splits));
                                  kernel<<<grid, kThreads, kDynamicSmem, stream>>>(
                                      static_cast<T*>(out), part_o, part_ml, static_cast<const T*>(q),
                                      static_cast<const T*>(kc), static_cast<const T*>(vc), g, sp, head_blocks);
                                  return cudaGetLastError();
                                });
}

template <typename T, int LK>
cudaError_t launch_lk(void* out, const void* q, const void* kc, const void* vc, const AttentionGeometry& g,
                      cudaStream_t stream) {
  switch (heads_per_block(g.group)) {
    case 8: return launch_lk_hb<T, LK, 8>(out, q, kc, vc, g, stream);
    case 4: return launch_lk_hb<T, LK, 4>(out, q, kc, vc, g, stream);
    default: return launch_lk_hb<T, LK, 2>(out, q, kc, vc, g, stream);
  }
}

template <typename T>
struct Decode {
  static cudaError_t run(void* out, const void* q, const void* kc, const void* vc, const AttentionGeometry& g,
                         cudaStream_t stream) {
    switch (lanes_per_key(g.d, dev::kVec<T>)) {
      case 8: return launch_lk<T, 8>(out, q, kc, vc, g, stream);
      case 16: return launch_lk<T, 16>(out, q, kc, vc, g, stream);
      case 32: return launch_lk<T, 32>(out, q, kc, vc, g, stream);
      default: return cudaErrorInvalidValue;
    }
  }
};

}  // namespace

bool attention_decode_fits(const void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                           const AttentionGeometry& g) {
  const int vec = elem == launch::Elem::kF32 ? 4 : 8;
  if (g.q_len != 1 || g.d % vec != 0 || lanes_per_key(g.d, vec) == 0) return false;
  if (!attention_aligned16(out, q, kc, vc)) return false;
  const int64_t head_blocks = (g.group + heads_per_block(g.group) - 1) / heads_per_block(g.group);
  return g.batch <= 0x7fffffff && g.kv_heads * head_blocks <= 65535 && g.end_key(g.q_start) > g.first_key(g.q_start);
}

cudaError_t attention_decode(void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                             const AttentionGeometry& g, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Decode, out, q, kc, vc, g, stream);
}

}  // namespace fk::cuda
