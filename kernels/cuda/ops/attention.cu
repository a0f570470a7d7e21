// CUDA attention: the launcher that picks a kernel (attention.cuh) and the general
// kernel, flash-attention style in fp32 on CUDA cores, for what the tensor-core and
// split-KV kernels do not take (fp32 data, head sizes that are not a multiple of 8,
// unaligned tensors). A block owns one sequence b, one KV head and a tile of kBQ query
// rows; the rows of a sequence are ordered (position, query head of the KV head's
// group), so a decode step of a GQA model still fills a tile with the heads that share
// the K/V it reads. The block walks the keys that any of its rows can see in tiles of
// kBK through shared memory (fp32); kGroup threads own one query row: they score
// kBK / kGroup keys each, keep the row's running max and sum (online softmax, fp32)
// and kGroup-strided slices of its output accumulator. Per-row masking reproduces the
// CPU op exactly: causal keys j in [p - window + 1, p] (window > 0) or [0, p];
// bidirectional keys j < kv_end (q_start + q_len, or every key of a cross-attention),
// within |p - j| < window when window > 0.
#include "kernels/cuda/ops/attention_launch.h"
#include "kernels/cuda/ops/attention.cuh"
#include "kernels/cuda/ops/elem.cuh"

#include <mutex>
#include <vector>

namespace fk::cuda {
namespace {

constexpr int kBQ = 16;                  // query rows per block
constexpr int kBK = 32;                  // keys per shared-memory tile
constexpr int kThreads = 128;
constexpr int kGroup = kThreads / kBQ;   // threads per query row (lanes of one warp)
constexpr int kKeysPerThread = kBK / kGroup;
constexpr int kChunks = static_cast<int>(launch::kAttentionMaxHeadDim) / kGroup;
static_assert(32 % kGroup == 0 && kBK % kGroup == 0, "a row's threads must sit in one warp");

using Geometry = AttentionGeometry;

size_t shared_bytes(int d) {
  const size_t dp = static_cast<size_t>(d) + 1;
  return sizeof(float) * ((kBQ + 2 * kBK) * dp + kBQ * (kBK + 1));
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    attention_kernel(T* __restrict__ out, const T* __restrict__ q, const T* __restrict__ kc,
                     const T* __restrict__ vc, Geometry g, int64_t tiles) {
  extern __shared__ float smem[];
  const int d = g.d, dp = d + 1;  // padded rows: the group's lanes hit distinct banks
  float* qs = smem;               // [kBQ][dp]
  float* ks = qs + kBQ * dp;      // [kBK][dp]
  float* vs = ks + kBK * dp;      // [kBK][dp]
  float* ps = vs + kBK * dp;      // [kBQ][kBK + 1] probabilities of the current tile

  const int64_t b = blockIdx.x / tiles, r0 = (blockIdx.x % tiles) * kBQ, kvh = blockIdx.y;
  const int tid = threadIdx.x, row = tid / kGroup, sub = tid % kGroup;
  const int64_t r = r0 + row;
  const bool active = r < g.rows;
  const int64_t t = b * g.q_len + (active ? r / g.group : 0);
  const int64_t h = kvh * g.group + (active ? r % g.group : 0);
  const int64_t p = g.q_start + (active ? r / g.group : 0);
  const int64_t j0 = g.first_key(p), j1 = g.end_key(p);
  // Keys any row of the tile sees (first_key and end_key are monotone in p).
  const int64_t r_last = (r0 + kBQ < g.rows ? r0 + kBQ : g.rows) - 1;
  const int64_t kb0 = g.first_key(g.q_start + r0 / g.group), kb1 = g.end_key(g.q_start + r_last / g.group);

  for (int idx = tid; idx < kBQ * d; idx += kThreads) {
    const int rr = idx / d, e = idx % d;
    const int64_t rq = r0 + rr;
    float v = 0.f;
    if (rq < g.rows) {
      const int64_t tq = b * g.q_len + rq / g.group, hq = kvh * g.group + rq % g.group;
      v = dev::to_f32(q[(static_cast<size_t>(tq) * g.q_heads + hq) * d + e]);
    }
    qs[rr * dp + e] = v;
  }

  float acc[kChunks];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) acc[c] = 0.f;
  float m = -INFINITY, l = 0.f;
  const float* qrow = qs + row * dp;
  float* prow = ps + row * (kBK + 1);

  for (int64_t kt = kb0; kt < kb1; kt += kBK) {
    __syncthreads();  // the previous tile is consumed (and, first time, Q is stored)
    for (int idx = tid; idx < kBK * d; idx += kThreads) {
      const int jj = idx / d, e = idx % d;
      const int64_t j = kt + jj;
      float kv = 0.f, vv = 0.f;
      if (j < kb1) {
        const size_t off = ((static_cast<size_t>(b) * g.cache_len + j) * g.kv_heads + kvh) * d + e;
        kv = dev::to_f32(kc[off]);
        vv = dev::to_f32(vc[off]);
      }
      ks[jj * dp + e] = kv;
      vs[jj * dp + e] = vv;
    }
    __syncthreads();

    float s[kKeysPerThread];
    float tile_max = -INFINITY;
#pragma unroll
    for (int c = 0; c < kKeysPerThread; ++c) {
      const int jj = sub + kGroup * c;
      const int64_t j = kt + jj;
      s[c] = -INFINITY;
      if (active && j >= j0 && j < j1) {
        const float* krow = ks + jj * dp;
        float dot = 0.f;
        for (int e = 0; e < d; ++e) dot += qrow[e] * krow[e];
        dot *= g.scale;
        if (g.softcap > 0.f) dot = g.softcap * tanhf(dot / g.softcap);
        s[c] = dot;
      }
      tile_max = fmaxf(tile_max, s[c]);
    }
#pragma unroll
    for (int o = kGroup / 2; o > 0; o >>= 1) tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, o));
    const float m_new = fmaxf(m, tile_max);
    const bool any = m_new != -INFINITY;  // false while the row has seen no visible key
    float psum = 0.f;
#pragma unroll
    for (int c = 0; c < kKeysPerThread; ++c) {
      const float pv = any ? expf(s[c] - m_new) : 0.f;  // masked keys: exp(-inf) = 0
      prow[sub + kGroup * c] = pv;
      psum += pv;
    }
#pragma unroll
    for (int o = kGroup / 2; o > 0; o >>= 1) psum += __shfl_xor_sync(0xffffffffu, psum, o);
    const float alpha = any ? expf(m - m_new) : 1.f;
    l = l * alpha + psum;
    m = m_new;
    __syncwarp();  // the row's probabilities, written by its kGroup lanes, are visible
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int e = sub + kGroup * c;
      if (e < d) {
        float a = acc[c] * alpha;
#pragma unroll 8
        for (int jj = 0; jj < kBK; ++jj) a += prow[jj] * vs[jj * dp + e];
        acc[c] = a;
      }
    }
  }

  if (!active) return;
  const float den = l + attention_sink_share(g, h, m);
  const float inv = l > 0.f ? 1.f / den : 0.f;
  T* orow = out + (static_cast<size_t>(t) * g.q_heads + h) * d;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int e = sub + kGroup * c;
    if (e < d) orow[e] = dev::from_f32<T>(acc[c] * inv);
  }
}

template <typename T>
struct Attention {
  static cudaError_t run(void* out, const void* q, const void* kc, const void* vc, const Geometry& g,
                         cudaStream_t stream) {
    const int64_t tiles = (g.rows + kBQ - 1) / kBQ;
    if (g.batch * tiles > 0x7fffffff) return cudaErrorInvalidValue;
    const size_t smem = shared_bytes(g.d);
    if (smem > 48 * 1024) {
      const cudaError_t e = cudaFuncSetAttribute(attention_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(smem));
      if (e != cudaSuccess) return e;
    }
    const dim3 grid(static_cast<unsigned>(g.batch * tiles), static_cast<unsigned>(g.kv_heads));
    attention_kernel<T><<<grid, kThreads, smem, stream>>>(static_cast<T*>(out), static_cast<const T*>(q),
                                                          static_cast<const T*>(kc), static_cast<const T*>(vc), g,
                                                          tiles);
    return cudaGetLastError();
  }
};

}  // namespace

AttentionDevice attention_device() {
  static std::mutex mu;
  static std::vector<AttentionDevice> cache;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return {};
  std::lock_guard<std::mutex> lock(mu);
  if (static_cast<size_t>(dev) >= cache.size()) cache.resize(static_cast<size_t>(dev) + 1);
  AttentionDevice& a = cache[static_cast<size_t>(dev)];
  if (a.sms == 0) {
    int sms = 0, major = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
      return {};
    a.sms = sms;
    a.major = major;
  }
  return a;
}

cudaError_t launch::attention(void* out, const void* query, const void* key_cache, const void* value_cache, Elem elem,
                              int64_t batch, int64_t cache_len, int64_t q_len, int64_t q_start, int64_t q_heads,
                              int64_t kv_heads, int64_t head_dim, float scale, bool causal, int64_t window,
                              float softcap, const float* sinks, cudaStream_t stream, int64_t kv_len) {
  if (batch == 0 || q_heads == 0 || head_dim == 0) return cudaSuccess;
  // Cross-attention (kv_len > 0): every query sees the kv_len keys, whatever its position.
  const bool cross = kv_len > 0;
  if (batch < 0 || q_len < 1 || q_start < 0 || kv_heads < 1 || kv_heads > 65535 || q_heads % kv_heads != 0 ||
      head_dim < 0 || head_dim > kAttentionMaxHeadDim || kv_len < 0)
    return cudaErrorInvalidValue;
  if (cross ? (causal || window != 0 || q_start != 0 || kv_len > cache_len) : q_start + q_len > cache_len)
    return cudaErrorInvalidValue;
  Geometry g{};
  g.batch = batch;
  g.cache_len = cache_len;
  g.q_len = q_len;
  g.q_start = q_start;
  g.q_heads = q_heads;
  g.kv_heads = kv_heads;
  g.group = q_heads / kv_heads;
  g.rows = q_len * g.group;
  g.d = static_cast<int>(head_dim);
  g.scale = scale;
  g.softcap = softcap;
  g.causal = causal;
  g.window = window;
  g.sinks = sinks;
  g.kv_end = cross ? kv_len : q_start + q_len;
  if (attention_decode_mma_fits(out, query, key_cache, value_cache, elem, g))
    return attention_decode_mma(out, query, key_cache, value_cache, elem, g, stream);
  if (attention_decode_fits(out, query, key_cache, value_cache, elem, g))
    return attention_decode(out, query, key_cache, value_cache, elem, g, stream);
  if (attention_flash_fits(out, query, key_cache, value_cache, elem, g))
    return attention_flash(out, query, key_cache, value_cache, elem, g, stream);
  return FK_CUDA_DISPATCH_ELEM(elem, Attention, out, query, key_cache, value_cache, g, stream);
}

}  // namespace fk::cuda
