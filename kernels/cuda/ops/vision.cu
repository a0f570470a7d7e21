// CUDA baselines of the vision-encoder ops (kernels/ops/vision.cc), all memory bound:
//   patchify: a grid-stride loop over the output in packs of N elements, N the widest
//     of 16 / sizeof(T), its halves, ..., 1 that divides the patch and the image width
//     (so a pack never leaves a kx run and its source offset is a multiple of N; pixels
//     past the last whole patch are never read) with both pointers
//     16-byte aligned; writes are coalesced, reads come in runs of a patch row. Bitwise.
//   patch_tokens: a block per output row (grid-stride over rows), its threads over the
//     row's packs (16 bytes when hidden and every pointer allow, else elements): the
//     prefix or patch row plus the position row, fp32 sums rounded once.
//   channel_scale: a grid-stride loop over x in packs (16 bytes when hidden and both
//     pointers allow), each times gamma's matching pack; every thread reads and writes
//     the same positions, so in place is safe.
#include "kernels/cuda/ops/row.cuh"
#include "kernels/cuda/ops/vision_launch.h"

namespace fk::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T, int N>
__global__ void patchify_kernel(T* __restrict__ out, const T* __restrict__ pixels, int64_t packs, int64_t cols,
                                int64_t patches, int64_t per_row, int64_t channels, int64_t height, int64_t width,
                                int64_t p) {
  using P = dev::Pack<T, N>;
  const int64_t pp = p * p;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < packs; q += stride) {
    const int64_t i = q * N, r = i / cols, col = i - r * cols;
    const int64_t b = r / patches, patch = r - b * patches, py = patch / per_row, px = patch - py * per_row;
    const int64_t c = col / pp, k = col - c * pp, ky = k / p, kx = k - ky * p;
    const int64_t src = ((b * channels + c) * height + py * p + ky) * width + px * p + kx;
    reinterpret_cast<P*>(out)[q] = *reinterpret_cast<const P*>(pixels + src);
  }
}

template <typename T, int N>
__global__ void patch_tokens_kernel(T* __restrict__ out, const T* __restrict__ patches, const T* __restrict__ prefix,
                                    const T* __restrict__ positions, int64_t rows, int64_t per_image,
                                    int64_t prefix_rows, int64_t packs) {
  using P = dev::Pack<T, N>;
  const int64_t seq = prefix_rows + per_image, hidden = packs * N;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t b = r / seq, j = r - b * seq;
    const T* src = j < prefix_rows ? prefix + j * hidden : patches + (b * per_image + j - prefix_rows) * hidden;
    const P* a = reinterpret_cast<const P*>(src);
    const P* e = reinterpret_cast<const P*>(positions + j * hidden);
    P* dst = reinterpret_cast<P*>(out + r * hidden);
    for (int64_t q = threadIdx.x; q < packs; q += blockDim.x) {
      const P x = a[q], y = e[q];
      P o;
#pragma unroll
      for (int k = 0; k < N; ++k) o.v[k] = dev::from_f32<T>(dev::to_f32(x.v[k]) + dev::to_f32(y.v[k]));
      dst[q] = o;
    }
  }
}

template <typename T, int N>
__global__ void channel_scale_kernel(T* x, const T* __restrict__ gamma, int64_t packs, int64_t row_packs) {
  using P = dev::Pack<T, N>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < packs; q += stride) {
    P v = reinterpret_cast<const P*>(x)[q];
    const P g = reinterpret_cast<const P*>(gamma)[q % row_packs];
#pragma unroll
    for (int k = 0; k < N; ++k) v.v[k] = dev::from_f32<T>(dev::to_f32(v.v[k]) * dev::to_f32(g.v[k]));
    reinterpret_cast<P*>(x)[q] = v;
  }
}

template <typename T>
struct Patchify {
  // The widest pack N <= 16 bytes that divides the patch (pointers 16-byte aligned).
  template <int N>
  static cudaError_t run_packs(T* out, const T* pixels, int64_t b, int64_t c, int64_t h, int64_t w, int64_t p,
                               cudaStream_t stream) {
    if constexpr (N > 1) {
      if (p % N != 0 || w % N != 0 || !dev::aligned16(out) || !dev::aligned16(pixels))
        return run_packs<N / 2>(out, pixels, b, c, h, w, p, stream);
    }
    const int64_t per_row = w / p, patches = (h / p) * per_row, cols = c * p * p;
    const int64_t packs = b * patches * cols / N;
    patchify_kernel<T, N><<<dev::grid_blocks(packs, kThreads), kThreads, 0, stream>>>(out, pixels, packs, cols, patches,
                                                                                      per_row, c, h, w, p);
    return cudaGetLastError();
  }

  static cudaError_t run(void* out, const void* pixels, int64_t b, int64_t c, int64_t h, int64_t w, int64_t p,
                         cudaStream_t stream) {
    if (p < 1 || h < p || w < p) return cudaErrorInvalidValue;
    if (b * c * h * w == 0) return cudaSuccess;
    return run_packs<dev::kVec<T>>(static_cast<T*>(out), static_cast<const T*>(pixels), b, c, h, w, p, stream);
  }
};

template <typename T>
struct PatchTokens {
  template <int N>
  static cudaError_t launch_with(void* out, const void* patches, const void* prefix, const void* positions,
                                 int64_t rows, int64_t per_image, int64_t prefix_rows, int64_t hidden,
                                 cudaStream_t stream) {
    const int64_t packs = hidden / N;
    patch_tokens_kernel<T, N><<<dev::row_blocks(rows), dev::row_threads(packs), 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(patches), static_cast<const T*>(prefix),
        static_cast<const T*>(positions), rows, per_image, prefix_rows, packs);
    return cudaGetLastError();
  }

  static cudaError_t run(void* out, const void* patches, const void* prefix, const void* positions, int64_t images,
                         int64_t per_image, int64_t prefix_rows, int64_t hidden, cudaStream_t stream) {
    if (per_image < 1 || prefix_rows < 0 || (prefix_rows > 0 && prefix == nullptr)) return cudaErrorInvalidValue;
    const int64_t rows = images * (prefix_rows + per_image);
    if (rows <= 0 || hidden <= 0) return cudaSuccess;
    constexpr int V = dev::kVec<T>;
    if (hidden % V == 0 && dev::aligned16(out) && dev::aligned16(patches) && dev::aligned16(prefix) &&
        dev::aligned16(positions))
      return launch_with<V>(out, patches, prefix, positions, rows, per_image, prefix_rows, hidden, stream);
    return launch_with<1>(out, patches, prefix, positions, rows, per_image, prefix_rows, hidden, stream);
  }
};

template <typename T>
struct ChannelScale {
  static cudaError_t run(void* x, const void* gamma, int64_t tokens, int64_t hidden, cudaStream_t stream) {
    const int64_t n = tokens * hidden;
    if (n <= 0) return cudaSuccess;
    constexpr int V = dev::kVec<T>;
    T* xp = static_cast<T*>(x);
    const T* g = static_cast<const T*>(gamma);
    if (hidden % V == 0 && dev::aligned16(x) && dev::aligned16(gamma))
      channel_scale_kernel<T, V><<<dev::grid_blocks(n / V, kThreads), kThreads, 0, stream>>>(xp, g, n / V, hidden / V);
    else
      channel_scale_kernel<T, 1><<<dev::grid_blocks(n, kThreads), kThreads, 0, stream>>>(xp, g, n, hidden);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::patchify(void* out, const void* pixels, Elem elem, int64_t images, int64_t channels, int64_t height,
                             int64_t width, int64_t patch, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Patchify, out, pixels, images, channels, height, width, patch, stream);
}

cudaError_t launch::patch_tokens(void* out, const void* patches, const void* prefix, const void* positions, Elem elem,
                                 int64_t images, int64_t patches_per_image, int64_t prefix_rows, int64_t hidden,
                                 cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, PatchTokens, out, patches, prefix, positions, images, patches_per_image,
                               prefix_rows, hidden, stream);
}

cudaError_t launch::channel_scale(void* x, const void* gamma, Elem elem, int64_t tokens, int64_t hidden,
                                  cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, ChannelScale, x, gamma, tokens, hidden, stream);
}

}  // namespace fk::cuda
