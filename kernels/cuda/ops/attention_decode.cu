// Split-KV attention for one query position per sequence (a decode step, q_len == 1):
// memory-bound, so every SM must stream K/V. A block owns one sequence b, one KV head,
// up to HB query heads of its group (so K/V are read once for the heads that share
// them) and one split: a contiguous range of the keys the query sees. LK lanes hold one
// key's row as 16-byte packs; the block's 128 threads are 128 / LK key groups, each
// taking every (128 / LK)-th key of a tile:
//   scores  each key group dots its keys with the heads' queries (fp32, a shuffle sum
//           over the LK lanes), into shared memory;
//   softmax one warp per head: tile max, running max and sum (online softmax, fp32);
//   P V     each thread accumulates its keys' V packs into HB x pack fp32 sums.
// A tile's K and V rows are loaded together, at its start.
// At the end the key groups' sums are added in shared memory. One split writes the
// output; several write (max, sum, unnormalised output) partials to a stream-ordered
// workspace (cudaMallocAsync: capturable in a CUDA graph) that a second kernel merges.
// The split count fills the device: about two blocks per SM, at least kMinSplitKeys
// keys each.
#include "kernels/cuda/ops/attention.cuh"
#include "kernels/cuda/ops/attention_launch.h"
#include "kernels/cuda/ops/row.cuh"

#include <cstdint>
#include <mutex>
#include <vector>

namespace fk::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kKeysPerThread = 8;  // keys each key group takes per tile (loads in flight)
constexpr int64_t kMinSplitKeys = 64;

struct Split {
  int64_t splits, chunk;  // keys per split (the last may have fewer)
};

template <typename T, int LK, int HB>
__global__ void __launch_bounds__(kThreads)
    decode_kernel(T* __restrict__ out, float* __restrict__ part_o, float* __restrict__ part_ml,
                  const T* __restrict__ q, const T* __restrict__ kc, const T* __restrict__ vc, AttentionGeometry g,
                  Split sp, int head_blocks) {
  constexpr int V = dev::kVec<T>;
  constexpr int NKG = kThreads / LK;             // key groups
  constexpr int TK = NKG * kKeysPerThread;       // keys per tile
  constexpr int W = kThreads / 32;
  using P = dev::Pack<T, V>;
  __shared__ float sc[HB][TK];
  __shared__ float alpha_s[HB];
  __shared__ float red[NKG][LK * V];

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
  // Running max and sum per head (natural log domain), kept by the head's warp.
  __shared__ float m_s[HB], l_s[HB];
  if (tid < HB) m_s[tid] = -INFINITY, l_s[tid] = 0.f;
  __syncthreads();

  const size_t row_stride = static_cast<size_t>(g.kv_heads) * g.d;
  const T* kbase = kc + (static_cast<size_t>(b) * g.cache_len * g.kv_heads + kvh) * g.d + e0;
  const T* vbase = vc + (static_cast<size_t>(b) * g.cache_len * g.kv_heads + kvh) * g.d + e0;

  for (int64_t kt = ja; kt < jb; kt += TK) {
    // Scores of this tile's keys.
    P kp[kKeysPerThread];
#pragma unroll
    for (int c = 0; c < kKeysPerThread; ++c) {
      const int64_t j = kt + kg + NKG * c;
      kp[c] = P{};
      if (j < jb && dims) kp[c] = *reinterpret_cast<const P*>(kbase + static_cast<size_t>(j) * row_stride);
    }
    // The tile's V rows are asked for with its K rows, before the scores: both are in
    // flight while the block waits (the softmax's barriers would otherwise serialise them).
    P vp[kKeysPerThread];
#pragma unroll
    for (int c = 0; c < kKeysPerThread; ++c) {
      const int64_t j = kt + kg + NKG * c;
      vp[c] = P{};
      if (j < jb && dims) vp[c] = *reinterpret_cast<const P*>(vbase + static_cast<size_t>(j) * row_stride);
    }
#pragma unroll
    for (int c = 0; c < kKeysPerThread; ++c) {
      const int jj = kg + NKG * c;
      const bool valid = kt + jj < jb;
#pragma unroll
      for (int i = 0; i < HB; ++i) {
        float dot = 0.f;
#pragma unroll
        for (int v = 0; v < V; ++v) dot += qr[i][v] * dev::to_f32(kp[c].v[v]);
#pragma unroll
        for (int o = LK / 2; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
        if (sub == 0) {
          float sv = dot * g.scale;
          if (g.softcap > 0.f) sv = g.softcap * tanhf(sv / g.softcap);
          sc[i][jj] = valid && i < nh ? sv : -INFINITY;
        }
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
#pragma unroll
      for (int i = 0; i < HB; ++i) {
        const float pv = sc[i][jj];
#pragma unroll
        for (int v = 0; v < V; ++v) acc[i][v] += pv * dev::to_f32(vp[c].v[v]);
      }
    }
    __syncthreads();  // sc is rewritten by the next tile
  }

  // Add the key groups' sums, head by head, and write.
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
        out[static_cast<size_t>(row0 + i) * g.d + e] = dev::from_f32<T>(l_s[i] > 0.f ? sum / l_s[i] : 0.f);
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

// Merges the splits of one output row (a block per row, a thread per dimension).
template <typename T>
__global__ void merge_kernel(T* __restrict__ out, const float* __restrict__ part_o, const float* __restrict__ part_ml,
                             int64_t splits, int d) {
  const size_t row = blockIdx.x;
  const float* ml = part_ml + row * splits * 2;
  float mx = -INFINITY;
  for (int64_t s = 0; s < splits; ++s)
    if (ml[2 * s + 1] > 0.f) mx = fmaxf(mx, ml[2 * s]);
  float den = 0.f;
  for (int64_t s = 0; s < splits; ++s)
    if (ml[2 * s + 1] > 0.f) den += expf(ml[2 * s] - mx) * ml[2 * s + 1];
  for (int e = threadIdx.x; e < d; e += blockDim.x) {
    float num = 0.f;
    for (int64_t s = 0; s < splits; ++s)
      if (ml[2 * s + 1] > 0.f) num += expf(ml[2 * s] - mx) * part_o[(row * splits + s) * d + e];
    out[row * d + e] = dev::from_f32<T>(den > 0.f ? num / den : 0.f);
  }
}

int lanes_per_key(int d, int vec) {
  const int need = (d + vec - 1) / vec;
  for (int lk = 8; lk <= 32; lk *= 2)
    if (need <= lk) return lk;
  return 0;
}

int heads_per_block(int64_t group) { return group >= 8 ? 8 : (group > 2 ? 4 : 2); }

Split split_for(const AttentionGeometry& g, int64_t base_blocks) {
  const int64_t keys = g.end_key(g.q_start) - g.first_key(g.q_start);
  const int sms = attention_device().sms;  // cached per device, read once a call
  const int64_t target = 2 * static_cast<int64_t>(sms > 0 ? sms : 1);
  int64_t splits = (target + base_blocks - 1) / base_blocks;
  const int64_t most = (keys + kMinSplitKeys - 1) / kMinSplitKeys;
  if (splits > most) splits = most;
  if (splits < 1) splits = 1;
  const int64_t chunk = (keys + splits - 1) / splits;
  return {(keys + chunk - 1) / chunk, chunk};
}

// The device's default memory pool keeps what it freed (the workspace is asked for at
// every call).
void keep_pool(int dev) {
  static std::mutex mu;
  static std::vector<bool> done;
  std::lock_guard<std::mutex> lock(mu);
  if (static_cast<size_t>(dev) >= done.size()) done.resize(static_cast<size_t>(dev) + 1, false);
  if (done[static_cast<size_t>(dev)]) return;
  cudaMemPool_t pool;
  if (cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) {
    uint64_t keep = UINT64_MAX;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }
  done[static_cast<size_t>(dev)] = true;
}

template <typename T, int LK, int HB>
cudaError_t launch_lk_hb(void* out, const void* q, const void* kc, const void* vc, const AttentionGeometry& g,
                         cudaStream_t stream) {
  const int head_blocks = static_cast<int>((g.group + HB - 1) / HB);
  const Split sp = split_for(g, g.batch * g.kv_heads * head_blocks);
  float* part_o = nullptr;
  float* part_ml = nullptr;
  const size_t rows = static_cast<size_t>(g.batch * g.q_heads);
  if (sp.splits > 1) {
    int dev = 0;
    if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
    keep_pool(dev);
    void* ws = nullptr;
    const size_t o_bytes = rows * static_cast<size_t>(sp.splits) * static_cast<size_t>(g.d) * sizeof(float);
    const size_t ml_bytes = rows * static_cast<size_t>(sp.splits) * 2 * sizeof(float);
    if (const cudaError_t e = cudaMallocAsync(&ws, o_bytes + ml_bytes, stream); e != cudaSuccess) return e;
    part_o = static_cast<float*>(ws);
    part_ml = reinterpret_cast<float*>(static_cast<char*>(ws) + o_bytes);
  }
  const dim3 grid(static_cast<unsigned>(g.batch), static_cast<unsigned>(g.kv_heads * head_blocks),
                  static_cast<unsigned>(sp.splits));
  decode_kernel<T, LK, HB><<<grid, kThreads, 0, stream>>>(
      static_cast<T*>(out), part_o, part_ml, static_cast<const T*>(q), static_cast<const T*>(kc),
      static_cast<const T*>(vc), g, sp, head_blocks);
  cudaError_t e = cudaGetLastError();
  if (sp.splits > 1) {
    if (e == cudaSuccess) {
      merge_kernel<T><<<static_cast<unsigned>(rows), dev::row_threads(g.d), 0, stream>>>(static_cast<T*>(out), part_o,
                                                                                        part_ml, sp.splits, g.d);
      e = cudaGetLastError();
    }
    const cudaError_t f = cudaFreeAsync(part_o, stream);
    if (e == cudaSuccess) e = f;
  }
  return e;
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
  if (!dev::aligned16(out) || !dev::aligned16(q) || !dev::aligned16(kc) || !dev::aligned16(vc)) return false;
  const int64_t head_blocks = (g.group + heads_per_block(g.group) - 1) / heads_per_block(g.group);
  return g.batch <= 0x7fffffff && g.kv_heads * head_blocks <= 65535 && g.end_key(g.q_start) > g.first_key(g.q_start);
}

cudaError_t attention_decode(void* out, const void* q, const void* kc, const void* vc, launch::Elem elem,
                             const AttentionGeometry& g, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Decode, out, q, kc, vc, g, stream);
}

}  // namespace fk::cuda
