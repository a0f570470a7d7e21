// CUDA baselines of MLA's ops (kernels/ops/mla.cc).
//   mla_cache_write: one block per new token, its threads over the cache row.
//   head_linear: a tiled GEMM per head: a block computes 16 tokens x 64 outputs of one
//     head, staging 32-wide slices of x and w in shared memory (fp32), 4 outputs a thread.
//   mla_attention: one block (8 warps) per query row and head. The query (dc + dr values)
//     sits in shared memory; keys go in tiles of 64: each warp scores 8 of them (lanes
//     over the row, a shuffle sum), then the tile's weights update an online softmax
//     (running max and sum) and each thread accumulates its own output columns over the
//     tile (the latent c_j is both key and value). A baseline: every head reads the
//     sequence's cache once (no sharing across heads in a block), no tensor cores.
#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/mla_launch.h"

#include <climits>

namespace fk::cuda {
namespace {

template <typename T>
__global__ void cache_write_kernel(const T* __restrict__ kv_c, const T* __restrict__ k_pe, T* __restrict__ cache,
                                   int64_t cache_len, int dc, int dr, int64_t q_len, int64_t q_start) {
  const int64_t t = blockIdx.x, s = t / q_len, i = t % q_len;
  T* dst = cache + (s * cache_len + q_start + i) * (dc + dr);
  for (int e = threadIdx.x; e < dc + dr; e += blockDim.x) dst[e] = e < dc ? kv_c[t * dc + e] : k_pe[t * dr + (e - dc)];
}

template <typename T>
struct CacheWrite {
  static cudaError_t run(const void* kv_c, const void* k_pe, void* cache, int64_t batch, int64_t cache_len, int64_t dc,
                         int64_t dr, int64_t q_len, int64_t q_start, cudaStream_t stream) {
    const int64_t rows = batch * q_len;
    if (rows == 0) return cudaSuccess;
    if (rows > INT_MAX || dc + dr > INT_MAX) return cudaErrorInvalidValue;
    cache_write_kernel<T><<<static_cast<unsigned>(rows), dev::row_threads(dc + dr), 0, stream>>>(
        static_cast<const T*>(kv_c), static_cast<const T*>(k_pe), static_cast<T*>(cache), cache_len,
        static_cast<int>(dc), static_cast<int>(dr), q_len, q_start);
    return cudaGetLastError();
  }
};

constexpr int kTileT = 16, kTileN = 64, kTileK = 32;

template <typename T>
__global__ void head_linear_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ w,
                                   int64_t tokens, int heads, int k, int n, bool w_kn) {
  __shared__ float xs[kTileT][kTileK + 1];
  __shared__ float ws[kTileN][kTileK + 1];
  const int h = blockIdx.z;
  const int64_t t0 = static_cast<int64_t>(blockIdx.y) * kTileT;
  const int n0 = blockIdx.x * kTileN;
  const int tid = threadIdx.x;  // 256 threads: token tid / 16, outputs (tid % 16) + 16 j
  const int tt = tid / 16, nn = tid % 16;
  const T* wh = w + static_cast<size_t>(h) * n * k;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int k0 = 0; k0 < k; k0 += kTileK) {
    for (int e = tid; e < kTileT * kTileK; e += 256) {
      const int r = e / kTileK, c = e % kTileK;
      const int64_t t = t0 + r;
      xs[r][c] = t < tokens && k0 + c < k ? dev::to_f32(x[(t * heads + h) * k + k0 + c]) : 0.f;
    }
    for (int e = tid; e < kTileN * kTileK; e += 256) {
      int r, c;
      if (w_kn) {  // w_h [k, n]: consecutive threads read consecutive outputs
        r = e % kTileN;
        c = e / kTileN;
      } else {  // w_h [n, k]: consecutive threads read consecutive inputs
        r = e / kTileK;
        c = e % kTileK;
      }
      const int on = n0 + r, ok = k0 + c;
      float v = 0.f;
      if (on < n && ok < k)
        v = dev::to_f32(w_kn ? wh[static_cast<size_t>(ok) * n + on] : wh[static_cast<size_t>(on) * k + ok]);
      ws[r][c] = v;
    }
    __syncthreads();
#pragma unroll 8
    for (int c = 0; c < kTileK; ++c) {
      const float xv = xs[tt][c];
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[j] += xv * ws[nn + 16 * j][c];
    }
    __syncthreads();
  }
  const int64_t t = t0 + tt;
  if (t >= tokens) return;
  for (int j = 0; j < 4; ++j) {
    const int on = n0 + nn + 16 * j;
    if (on < n) out[(t * heads + h) * n + on] = dev::from_f32<T>(acc[j]);
  }
}

template <typename T>
struct HeadLinear {
  static cudaError_t run(void* out, const void* x, const void* w, int64_t tokens, int64_t heads, int64_t k, int64_t n,
                         bool w_kn, cudaStream_t stream) {
    if (tokens == 0 || heads == 0 || n == 0) return cudaSuccess;
    if (heads > 65535 || k > INT_MAX || n > INT_MAX || (tokens + kTileT - 1) / kTileT > 65535)
      return cudaErrorInvalidValue;
    const dim3 grid(static_cast<unsigned>((n + kTileN - 1) / kTileN),
                    static_cast<unsigned>((tokens + kTileT - 1) / kTileT), static_cast<unsigned>(heads));
    head_linear_kernel<T><<<grid, 256, 0, stream>>>(static_cast<T*>(out), static_cast<const T*>(x),
                                                    static_cast<const T*>(w), tokens, static_cast<int>(heads),
                                                    static_cast<int>(k), static_cast<int>(n), w_kn);
    return cudaGetLastError();
  }
};

constexpr int kAttnThreads = 256, kKeyTile = 64, kAttnWarps = kAttnThreads / 32;
constexpr int kMaxCols = static_cast<int>(launch::kMlaMaxRow) / kAttnThreads;  // output columns a thread

template <typename T>
__global__ void mla_attention_kernel(T* __restrict__ out, const T* __restrict__ q_nope, const T* __restrict__ q_pe,
                                     const T* __restrict__ cache, int64_t cache_len, int64_t q_len, int64_t q_start,
                                     int heads, int dc, int dr, float scale) {
  __shared__ float q[launch::kMlaMaxRow];
  __shared__ float p[kKeyTile];
  const int64_t row = blockIdx.x;  // t heads + h
  const int64_t t = row / heads, b = t / q_len, pos = q_start + t % q_len;
  const int dk = dc + dr, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int e = tid; e < dk; e += kAttnThreads)
    q[e] = e < dc ? dev::to_f32(q_nope[row * dc + e]) : dev::to_f32(q_pe[row * dr + (e - dc)]);
  __syncthreads();
  const T* seq = cache + static_cast<size_t>(b) * cache_len * dk;
  float acc[kMaxCols];
#pragma unroll
  for (int i = 0; i < kMaxCols; ++i) acc[i] = 0.f;
  float m = -INFINITY, l = 0.f;
  for (int64_t j0 = 0; j0 <= pos; j0 += kKeyTile) {
    const int n = pos + 1 - j0 < kKeyTile ? static_cast<int>(pos + 1 - j0) : kKeyTile;
    for (int kk = warp; kk < n; kk += kAttnWarps) {
      const T* kr = seq + (j0 + kk) * dk;
      float s = 0.f;
      for (int e = lane; e < dk; e += 32) s += q[e] * dev::to_f32(kr[e]);
      s = dev::warp_sum(s);
      if (lane == 0) p[kk] = s * scale;
    }
    __syncthreads();
    float tile_max = -INFINITY;
    for (int kk = 0; kk < n; ++kk) tile_max = fmaxf(tile_max, p[kk]);
    const float m_new = fmaxf(m, tile_max);
    const float corr = expf(m - m_new);  // 0 on the first tile (m = -inf)
    __syncthreads();                     // every thread has read the raw scores
    if (tid < n) p[tid] = expf(p[tid] - m_new);
    __syncthreads();
    float tile_sum = 0.f;
    for (int kk = 0; kk < n; ++kk) tile_sum += p[kk];
    l = l * corr + tile_sum;
    m = m_new;
#pragma unroll
    for (int i = 0; i < kMaxCols; ++i) {
      const int e = tid + i * kAttnThreads;
      if (e >= dc) break;
      float a = acc[i] * corr;
      for (int kk = 0; kk < n; ++kk) a += p[kk] * dev::to_f32(seq[(j0 + kk) * dk + e]);
      acc[i] = a;
    }
    __syncthreads();  // p is rewritten by the next tile
  }
  const float inv = 1.f / l;
#pragma unroll
  for (int i = 0; i < kMaxCols; ++i) {
    const int e = tid + i * kAttnThreads;
    if (e >= dc) break;
    out[row * dc + e] = dev::from_f32<T>(acc[i] * inv);
  }
}

template <typename T>
struct MlaAttention {
  static cudaError_t run(void* out, const void* q_nope, const void* q_pe, const void* cache, int64_t batch,
                         int64_t cache_len, int64_t q_len, int64_t q_start, int64_t heads, int64_t dc, int64_t dr,
                         float scale, cudaStream_t stream) {
    const int64_t rows = batch * q_len * heads;
    if (rows == 0) return cudaSuccess;
    if (dc + dr > launch::kMlaMaxRow || dc < 1 || dr < 0 || rows > INT_MAX || heads > INT_MAX ||
        q_start + q_len > cache_len)
      return cudaErrorInvalidValue;
    mla_attention_kernel<T><<<static_cast<unsigned>(rows), kAttnThreads, 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(q_nope), static_cast<const T*>(q_pe), static_cast<const T*>(cache),
        cache_len, q_len, q_start, static_cast<int>(heads), static_cast<int>(dc), static_cast<int>(dr), scale);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::mla_cache_write(const void* kv_c, const void* k_pe, void* cache, Elem elem, int64_t batch,
                                    int64_t cache_len, int64_t dc, int64_t dr, int64_t q_len, int64_t q_start,
                                    cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, CacheWrite, kv_c, k_pe, cache, batch, cache_len, dc, dr, q_len, q_start, stream);
}

cudaError_t launch::head_linear(void* out, const void* x, const void* w, Elem elem, int64_t tokens, int64_t heads,
                                int64_t k, int64_t n, bool w_kn, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, HeadLinear, out, x, w, tokens, heads, k, n, w_kn, stream);
}

cudaError_t launch::mla_attention(void* out, const void* q_nope, const void* q_pe, const void* cache, Elem elem,
                                  int64_t batch, int64_t cache_len, int64_t q_len, int64_t q_start, int64_t heads,
                                  int64_t dc, int64_t dr, float scale, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, MlaAttention, out, q_nope, q_pe, cache, batch, cache_len, q_len, q_start, heads,
                               dc, dr, scale, stream);
}

}  // namespace fk::cuda
