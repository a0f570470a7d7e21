// CUDA baseline of vLLM's rotary_embedding: one block per token. The block stages the
// token's cos/sin row in shared memory as fp32, then its threads stride over chunks of
// W rotary elements of every query and key head: neox chunks take W elements of each
// half, gpt-j chunks W interleaved elements (W / 2 pairs). Chunks are 16-byte packs
// when head_size, the chunk stride and both head pointers allow it, else scalar
// (W = 1 neox, W = 2 gpt-j). Each pair is read and written by one thread only.
#include "kernels/cuda/ops/rotary_embedding_launch.h"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

constexpr int kMaxRot = 1024;

template <typename T, int W, bool VEC>
__device__ __forceinline__ void load_chunk(const T* p, float (&f)[W]) {
  if constexpr (VEC) {
    const dev::Pack<T, W> v = *reinterpret_cast<const dev::Pack<T, W>*>(p);
#pragma unroll
    for (int k = 0; k < W; ++k) f[k] = dev::to_f32(v.v[k]);
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k) f[k] = dev::to_f32(p[k]);
  }
}

template <typename T, int W, bool VEC>
__device__ __forceinline__ void store_chunk(T* p, const float (&f)[W]) {
  if constexpr (VEC) {
    dev::Pack<T, W> v;
#pragma unroll
    for (int k = 0; k < W; ++k) v.v[k] = dev::from_f32<T>(f[k]);
    *reinterpret_cast<dev::Pack<T, W>*>(p) = v;
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k) p[k] = dev::from_f32<T>(f[k]);
  }
}

template <typename T, int W, bool NEOX, bool VEC, typename Id>
__global__ void rope_kernel(const Id* __restrict__ positions, T* q, T* k, const T* __restrict__ cache,
                            int64_t tokens, int q_heads, int k_heads, int head_size, int rot, int64_t max_pos) {
  __shared__ float cs[kMaxRot];
  const int half = rot / 2;
  const int per_head = NEOX ? half / W : rot / W;  // chunks per head
  const int items = (q_heads + k_heads) * per_head;
  for (int64_t t = blockIdx.x; t < tokens; t += gridDim.x) {
    const int64_t pos = static_cast<int64_t>(positions[t]);
    if (pos < 0 || pos >= max_pos) continue;  // uniform over the block
    __syncthreads();                          // the previous token's readers are done with cs
    for (int j = threadIdx.x; j < rot; j += blockDim.x) cs[j] = dev::to_f32(cache[pos * rot + j]);
    __syncthreads();
    for (int j = threadIdx.x; j < items; j += blockDim.x) {
      const int h = j / per_head, c = j - h * per_head;
      T* head = h < q_heads ? q + (t * q_heads + h) * head_size : k + (t * k_heads + (h - q_heads)) * head_size;
      if constexpr (NEOX) {
        const int i0 = c * W;
        float x1[W], x2[W], y1[W], y2[W];
        load_chunk<T, W, VEC>(head + i0, x1);
        load_chunk<T, W, VEC>(head + half + i0, x2);
#pragma unroll
        for (int m = 0; m < W; ++m) {
          const float cv = cs[i0 + m], sv = cs[half + i0 + m];
          y1[m] = x1[m] * cv - x2[m] * sv;
          y2[m] = x2[m] * cv + x1[m] * sv;
        }
        store_chunk<T, W, VEC>(head + i0, y1);
        store_chunk<T, W, VEC>(head + half + i0, y2);
      } else {
        const int e0 = c * W;
        float x[W], y[W];
        load_chunk<T, W, VEC>(head + e0, x);
#pragma unroll
        for (int m = 0; m < W / 2; ++m) {
          const int i = e0 / 2 + m;
          const float cv = cs[i], sv = cs[half + i];
          y[2 * m] = x[2 * m] * cv - x[2 * m + 1] * sv;
          y[2 * m + 1] = x[2 * m + 1] * cv + x[2 * m] * sv;
        }
        store_chunk<T, W, VEC>(head + e0, y);
      }
    }
  }
}

struct RopeArgs {
  const void* positions;
  void* q;
  void* k;
  const void* cache;
  int64_t tokens;
  int q_heads, k_heads, head_size, rot;
  int64_t max_pos;
};

template <typename T, int W, bool NEOX, bool VEC, typename Id>
cudaError_t launch_with(const RopeArgs& a, cudaStream_t stream) {
  const int items = (a.q_heads + a.k_heads) * (NEOX ? a.rot / 2 / W : a.rot / W);
  rope_kernel<T, W, NEOX, VEC, Id><<<dev::row_blocks(a.tokens), dev::row_threads(items), 0, stream>>>(
      static_cast<const Id*>(a.positions), static_cast<T*>(a.q), static_cast<T*>(a.k), static_cast<const T*>(a.cache),
      a.tokens, a.q_heads, a.k_heads, a.head_size, a.rot, a.max_pos);
  return cudaGetLastError();
}

template <typename T, bool NEOX, typename Id>
cudaError_t launch_style(const RopeArgs& a, cudaStream_t stream) {
  constexpr int V = dev::kVec<T>;
  const int stride = NEOX ? a.rot / 2 : a.rot;  // the chunk start offsets are multiples of V when this is
  if (a.head_size % V == 0 && stride % V == 0 && dev::aligned16(a.q) && dev::aligned16(a.k))
    return launch_with<T, V, NEOX, true, Id>(a, stream);
  return launch_with<T, NEOX ? 1 : 2, NEOX, false, Id>(a, stream);
}

template <typename T>
struct Rope {
  template <typename Id>
  static cudaError_t run_ids(const RopeArgs& a, bool neox, cudaStream_t stream) {
    return neox ? launch_style<T, true, Id>(a, stream) : launch_style<T, false, Id>(a, stream);
  }

  static cudaError_t run(const RopeArgs& a, bool pos_i64, bool neox, cudaStream_t stream) {
    return pos_i64 ? run_ids<int64_t>(a, neox, stream) : run_ids<int32_t>(a, neox, stream);
  }
};

}  // namespace

cudaError_t launch::rotary_embedding(const void* positions, bool pos_i64, void* query, void* key,
                                     const void* cos_sin_cache, Elem elem, int64_t tokens, int64_t q_heads,
                                     int64_t k_heads, int64_t head_size, int64_t rot_dim, int64_t max_positions,
                                     bool neox, cudaStream_t stream) {
  if (tokens <= 0 || rot_dim <= 0 || q_heads + k_heads <= 0 || max_positions <= 0) return cudaSuccess;
  if (rot_dim % 2 != 0 || rot_dim > kMaxRot || rot_dim > head_size || q_heads < 0 || k_heads < 0 ||
      (q_heads + k_heads) * rot_dim > INT32_MAX)
    return cudaErrorInvalidValue;
  const RopeArgs a{positions,
                   query,
                   key,
                   cos_sin_cache,
                   tokens,
                   static_cast<int>(q_heads),
                   static_cast<int>(k_heads),
                   static_cast<int>(head_size),
                   static_cast<int>(rot_dim),
                   max_positions};
  return FK_CUDA_DISPATCH_ELEM(elem, Rope, a, pos_i64, neox, stream);
}

}  // namespace fk::cuda
