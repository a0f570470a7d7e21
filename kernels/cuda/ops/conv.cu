// CUDA baselines of the ConvNeXt ops (kernels/ops/conv.cc), channels last, all memory
// bound:
//   depthwise_conv2d: a grid-stride loop over the output in packs of channels (16 bytes
//     when the channels and the pointers allow, else one element), consecutive threads
//     on consecutive packs of one pixel (coalesced reads of x and writes of out); each
//     thread sums the bias then its in-image taps in (ky, kx) order in fp32 (the CPU
//     baseline's order), x's neighbouring reads served by the caches.
//   grn: three kernels. Column sums: a block of kColRows warps per (image, run of kLanes
//     channels, run of pixels), each warp on every kColRows-th pixel row (a warp reads
//     kLanes consecutive channels), the warps' sums of squares added in shared memory and
//     written to fp32 scratch [splits, images, channels]; the pixels are split over
//     blocks until there are about kWantBlocks, so few images still fill the device.
//     Norms: a block per image adds the splits, takes the square roots, their block mean
//     and leaves Nx [images, channels] in scratch. Apply: a grid-stride loop over packs
//     of out. Deterministic: every sum has a fixed order.
//   patchify_channels_last: a thread per (output row, channel) copies the channel's
//     p x p taps (a warp reads a coalesced run of channels a tap) to its p*p consecutive
//     output elements, one 4-element pack for patch 2 (ConvNeXt's downsampling). Bitwise.
//   spatial_mean: grn's column sums without squares; with one split they are the means
//     (divided by the pixels, rounded once), else a second kernel adds the splits.
#include "kernels/cuda/ops/conv_launch.h"
#include "kernels/cuda/ops/row.cuh"
#include "kernels/cuda/ops/scratch.h"

namespace fk::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kLanes = 32;             // channels of a column-sum block (a warp's run)
constexpr int kColRows = 8;            // its warps, each on every kColRows-th pixel
constexpr int64_t kWantBlocks = 1024;  // column-sum blocks worth splitting the pixels for
constexpr int64_t kMinSplitRows = 64;  // pixels a split takes at least

// ---- depthwise_conv2d -----------------------------------------------------------

template <typename T, int N>
__global__ void depthwise_conv2d_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ weight,
                                        const T* __restrict__ bias, int64_t packs, int64_t cpacks, int64_t height,
                                        int64_t width, int64_t out_h, int64_t out_w, int64_t k, int64_t pad) {
  using P = dev::Pack<T, N>;
  const int64_t channels = cpacks * N, kk = k * k;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < packs; q += stride) {
    const int64_t pix = q / cpacks, c = (q - pix * cpacks) * N;
    const int64_t b = pix / (out_h * out_w), yx = pix - b * out_h * out_w, y = yx / out_w, ox = yx - y * out_w;
    float acc[N];
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = bias != nullptr ? dev::to_f32(bias[c + j]) : 0.f;
    // Taps with y + ky - pad in [0, height) and ox + kx - pad in [0, width).
    const int64_t ky0 = pad - y > 0 ? pad - y : 0, ky1 = height + pad - y < k ? height + pad - y : k;
    const int64_t kx0 = pad - ox > 0 ? pad - ox : 0, kx1 = width + pad - ox < k ? width + pad - ox : k;
    const T* w = weight + c * kk;
    for (int64_t ky = ky0; ky < ky1; ++ky) {
      const T* px = x + ((b * height + y + ky - pad) * width + ox + kx0 - pad) * channels + c;
      for (int64_t kx = kx0; kx < kx1; ++kx, px += channels) {
        const P v = *reinterpret_cast<const P*>(px);
        const int64_t t = ky * k + kx;
#pragma unroll
        for (int j = 0; j < N; ++j) acc[j] += dev::to_f32(w[j * kk + t]) * dev::to_f32(v.v[j]);
      }
    }
    P o;
#pragma unroll
    for (int j = 0; j < N; ++j) o.v[j] = dev::from_f32<T>(acc[j]);
    reinterpret_cast<P*>(out)[q] = o;
  }
}

template <typename T>
struct DepthwiseConv2d {
  template <int N>
  static cudaError_t launch_with(T* out, const T* x, const T* weight, const T* bias, int64_t images, int64_t height,
                                 int64_t width, int64_t channels, int64_t k, int64_t pad, cudaStream_t stream) {
    const int64_t out_h = height + 2 * pad - k + 1, out_w = width + 2 * pad - k + 1;
    const int64_t cpacks = channels / N, packs = images * out_h * out_w * cpacks;
    depthwise_conv2d_kernel<T, N><<<dev::grid_blocks(packs, kThreads), kThreads, 0, stream>>>(
        out, x, weight, bias, packs, cpacks, height, width, out_h, out_w, k, pad);
    return cudaGetLastError();
  }

  static cudaError_t run(void* out, const void* x, const void* weight, const void* bias, int64_t images, int64_t height,
                         int64_t width, int64_t channels, int64_t k, int64_t pad, cudaStream_t stream) {
    if (k < 1 || pad < 0 || height + 2 * pad - k + 1 < 1 || width + 2 * pad - k + 1 < 1) return cudaErrorInvalidValue;
    if (images * channels == 0) return cudaSuccess;
    T* o = static_cast<T*>(out);
    const T *xp = static_cast<const T*>(x), *w = static_cast<const T*>(weight), *bp = static_cast<const T*>(bias);
    constexpr int V = dev::kVec<T>;
    if (channels % V == 0 && dev::aligned16(out) && dev::aligned16(x))
      return launch_with<V>(o, xp, w, bp, images, height, width, channels, k, pad, stream);
    return launch_with<1>(o, xp, w, bp, images, height, width, channels, k, pad, stream);
  }
};

// ---- column sums (grn, spatial_mean) ----------------------------------------------

// How the per-(image, channel) sums over the pixels are cut into blocks: channel tiles
// of kLanes, the pixels in `splits` runs of `rows` (the last one shorter).
struct Columns {
  int64_t tiles, splits, rows;
};

Columns columns_for(int64_t images, int64_t pixels, int64_t channels) {
  const int64_t tiles = (channels + kLanes - 1) / kLanes, blocks = images * tiles;
  int64_t splits = (pixels + kMinSplitRows - 1) / kMinSplitRows;
  if (splits > kWantBlocks / blocks) splits = kWantBlocks / blocks;
  if (splits < 1) splits = 1;
  const int64_t rows = (pixels + splits - 1) / splits;
  return Columns{tiles, (pixels + rows - 1) / rows, rows};
}

// sums[(s * images + b) * channels + c] = (the sum over split s's pixels of x[b, n, c],
// squared when `squares`) / divisor, rounded to O (fp32 partials, or T for a mean).
template <typename T, typename O>
__global__ void column_sum_kernel(O* __restrict__ sums, const T* __restrict__ x, int64_t images, int64_t pixels,
                                  int64_t channels, Columns cols, bool squares, float divisor) {
  __shared__ float part[kColRows][kLanes + 1];
  const int lane = threadIdx.x % kLanes, wrow = threadIdx.x / kLanes;
  const int64_t per_split = images * cols.tiles, blocks = per_split * cols.splits;
  for (int64_t blk = blockIdx.x; blk < blocks; blk += gridDim.x) {
    const int64_t s = blk / per_split, bt = blk - s * per_split, b = bt / cols.tiles;
    const int64_t c = (bt - b * cols.tiles) * kLanes + lane;
    const int64_t n0 = s * cols.rows, n1 = n0 + cols.rows < pixels ? n0 + cols.rows : pixels;
    float acc = 0.f;
    if (c < channels)
      for (int64_t n = n0 + wrow; n < n1; n += kColRows) {
        const float v = dev::to_f32(x[(b * pixels + n) * channels + c]);
        acc += squares ? v * v : v;
      }
    part[wrow][lane] = acc;
    __syncthreads();
    if (wrow == 0 && c < channels) {
#pragma unroll
      for (int r = 1; r < kColRows; ++r) acc += part[r][lane];
      sums[(s * images + b) * channels + c] = dev::from_f32<O>(acc / divisor);
    }
    __syncthreads();  // part is reused by the next block of the loop
  }
}

template <typename T, typename O>
cudaError_t launch_column_sums(O* sums, const T* x, int64_t images, int64_t pixels, int64_t channels,
                               const Columns& cols, bool squares, float divisor, cudaStream_t stream) {
  column_sum_kernel<T, O><<<dev::row_blocks(images * cols.tiles * cols.splits), kLanes * kColRows, 0, stream>>>(
      sums, x, images, pixels, channels, cols, squares, divisor);
  return cudaGetLastError();
}

// ---- grn --------------------------------------------------------------------------

// nx[b, c] = Gx / (mean_c Gx + eps), Gx = sqrt(the splits' sums of squares): a block
// per image (grid-stride), its threads over the channels.
__global__ void grn_norm_kernel(float* __restrict__ nx, const float* __restrict__ part, int64_t images,
                                int64_t channels, int64_t splits, float eps) {
  for (int64_t b = blockIdx.x; b < images; b += gridDim.x) {
    float* g = nx + b * channels;
    float local = 0.f;
    for (int64_t c = threadIdx.x; c < channels; c += blockDim.x) {
      float ss = 0.f;
      for (int64_t s = 0; s < splits; ++s) ss += part[(s * images + b) * channels + c];
      g[c] = sqrtf(ss);
      local += g[c];
    }
    const float denom = dev::block_sum(local) / static_cast<float>(channels) + eps;
    for (int64_t c = threadIdx.x; c < channels; c += blockDim.x) g[c] = g[c] / denom;
  }
}

template <typename T, int N>
__global__ void grn_apply_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ gamma,
                                 const T* __restrict__ beta, const float* __restrict__ nx, int64_t packs,
                                 int64_t cpacks, int64_t pixels) {
  using P = dev::Pack<T, N>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < packs; q += stride) {
    const int64_t r = q / cpacks, cp = q - r * cpacks;
    const P v = reinterpret_cast<const P*>(x)[q], g = reinterpret_cast<const P*>(gamma)[cp],
            be = reinterpret_cast<const P*>(beta)[cp];
    const float* n = nx + (r / pixels * cpacks + cp) * N;
    P o;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const float xv = dev::to_f32(v.v[j]);
      o.v[j] = dev::from_f32<T>(dev::to_f32(g.v[j]) * (xv * n[j]) + dev::to_f32(be.v[j]) + xv);
    }
    reinterpret_cast<P*>(out)[q] = o;
  }
}

template <typename T>
struct Grn {
  template <int N>
  static void apply(T* out, const T* x, const T* gamma, const T* beta, const float* nx, int64_t images, int64_t pixels,
                    int64_t channels, cudaStream_t stream) {
    const int64_t cpacks = channels / N, packs = images * pixels * cpacks;
    grn_apply_kernel<T, N>
        <<<dev::grid_blocks(packs, kThreads), kThreads, 0, stream>>>(out, x, gamma, beta, nx, packs, cpacks, pixels);
  }

  static cudaError_t run(void* out, const void* x, const void* gamma, const void* beta, int64_t images, int64_t pixels,
                         int64_t channels, float eps, cudaStream_t stream) {
    if (pixels < 1 || channels < 1) return cudaErrorInvalidValue;
    if (images < 1) return cudaSuccess;
    const Columns cols = columns_for(images, pixels, channels);
    const size_t part_floats = static_cast<size_t>(cols.splits * images * channels);
    void* ws = nullptr;
    if (const cudaError_t e =
            scratch_alloc(&ws, (part_floats + static_cast<size_t>(images * channels)) * sizeof(float), stream);
        e != cudaSuccess)
      return e;
    float* part = static_cast<float*>(ws);
    float* nx = part + part_floats;
    const T* xp = static_cast<const T*>(x);
    cudaError_t e = launch_column_sums(part, xp, images, pixels, channels, cols, true, 1.f, stream);
    if (e == cudaSuccess) {
      grn_norm_kernel<<<dev::row_blocks(images), dev::row_threads(channels), 0, stream>>>(nx, part, images, channels,
                                                                                          cols.splits, eps);
      constexpr int V = dev::kVec<T>;
      T* o = static_cast<T*>(out);
      const T *g = static_cast<const T*>(gamma), *b = static_cast<const T*>(beta);
      if (channels % V == 0 && dev::aligned16(out) && dev::aligned16(x) && dev::aligned16(gamma) &&
          dev::aligned16(beta))
        apply<V>(o, xp, g, b, nx, images, pixels, channels, stream);
      else
        apply<1>(o, xp, g, b, nx, images, pixels, channels, stream);
      e = cudaGetLastError();
    }
    const cudaError_t f = scratch_free(ws, stream);
    return e == cudaSuccess ? f : e;
  }
};

// ---- patchify_channels_last --------------------------------------------------------

// A thread per (output row r, channel c): the p x p taps of channel c of patch r, stored
// at out[r, c*p*p ...] in (ky, kx) order. kP = 2 stores them as one 4-element pack (out
// aligned to it); kP = 0 takes the patch from p, element by element.
template <typename T, int kP>
__global__ void patchify_cl_kernel(T* __restrict__ out, const T* __restrict__ x, int64_t items, int64_t channels,
                                   int64_t patches, int64_t per_row, int64_t height, int64_t width, int64_t p) {
  if constexpr (kP > 0) p = kP;
  const int64_t pp = p * p;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < items; q += stride) {
    const int64_t r = q / channels, c = q - r * channels;
    const int64_t b = r / patches, patch = r - b * patches, py = patch / per_row, px = patch - py * per_row;
    const T* src = x + ((b * height + py * p) * width + px * p) * channels + c;
    T* dst = out + q * pp;  // (r * channels + c) * pp
    if constexpr (kP > 0) {
      dev::Pack<T, kP * kP> v;
#pragma unroll
      for (int ky = 0; ky < kP; ++ky)
#pragma unroll
        for (int kx = 0; kx < kP; ++kx) v.v[ky * kP + kx] = src[(ky * width + kx) * channels];
      *reinterpret_cast<dev::Pack<T, kP * kP>*>(dst) = v;
    } else {
      for (int64_t ky = 0; ky < p; ++ky)
        for (int64_t kx = 0; kx < p; ++kx) dst[ky * p + kx] = src[(ky * width + kx) * channels];
    }
  }
}

template <typename T>
struct PatchifyChannelsLast {
  static cudaError_t run(void* out, const void* x, int64_t images, int64_t height, int64_t width, int64_t channels,
                         int64_t p, cudaStream_t stream) {
    if (p < 1 || height < p || width < p) return cudaErrorInvalidValue;
    const int64_t per_row = width / p, patches = (height / p) * per_row, items = images * patches * channels;
    if (items <= 0) return cudaSuccess;
    T* o = static_cast<T*>(out);
    const T* xp = static_cast<const T*>(x);
    const unsigned blocks = dev::grid_blocks(items, kThreads);
    if (p == 2 && (reinterpret_cast<uintptr_t>(out) % (4 * sizeof(T))) == 0)
      patchify_cl_kernel<T, 2>
          <<<blocks, kThreads, 0, stream>>>(o, xp, items, channels, patches, per_row, height, width, p);
    else
      patchify_cl_kernel<T, 0>
          <<<blocks, kThreads, 0, stream>>>(o, xp, items, channels, patches, per_row, height, width, p);
    return cudaGetLastError();
  }
};

// ---- spatial_mean ------------------------------------------------------------------

// out[i] = (the splits' sums of element i of [images, channels]) / pixels, rounded once.
template <typename T>
__global__ void spatial_mean_finish_kernel(T* __restrict__ out, const float* __restrict__ part, int64_t items,
                                           int64_t splits, float pixels) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < items; i += stride) {
    float s = 0.f;
    for (int64_t k = 0; k < splits; ++k) s += part[k * items + i];
    out[i] = dev::from_f32<T>(s / pixels);
  }
}

template <typename T>
struct SpatialMean {
  static cudaError_t run(void* out, const void* x, int64_t images, int64_t pixels, int64_t channels,
                         cudaStream_t stream) {
    if (pixels < 1) return cudaErrorInvalidValue;
    const int64_t items = images * channels;
    if (items <= 0) return cudaSuccess;
    const Columns cols = columns_for(images, pixels, channels);
    T* o = static_cast<T*>(out);
    const T* xp = static_cast<const T*>(x);
    const auto n = static_cast<float>(pixels);
    if (cols.splits == 1) return launch_column_sums(o, xp, images, pixels, channels, cols, false, n, stream);
    void* ws = nullptr;
    if (const cudaError_t e = scratch_alloc(&ws, static_cast<size_t>(cols.splits * items) * sizeof(float), stream);
        e != cudaSuccess)
      return e;
    float* part = static_cast<float*>(ws);
    cudaError_t e = launch_column_sums(part, xp, images, pixels, channels, cols, false, 1.f, stream);
    if (e == cudaSuccess) {
      spatial_mean_finish_kernel<T>
          <<<dev::grid_blocks(items, kThreads), kThreads, 0, stream>>>(o, part, items, cols.splits, n);
      e = cudaGetLastError();
    }
    const cudaError_t f = scratch_free(ws, stream);
    return e == cudaSuccess ? f : e;
  }
};

}  // namespace

cudaError_t launch::depthwise_conv2d(void* out, const void* x, const void* weight, const void* bias, Elem elem,
                                     int64_t images, int64_t height, int64_t width, int64_t channels, int64_t kernel,
                                     int64_t padding, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, DepthwiseConv2d, out, x, weight, bias, images, height, width, channels, kernel,
                               padding, stream);
}

cudaError_t launch::grn(void* out, const void* x, const void* gamma, const void* beta, Elem elem, int64_t images,
                        int64_t pixels, int64_t channels, float eps, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Grn, out, x, gamma, beta, images, pixels, channels, eps, stream);
}

cudaError_t launch::patchify_channels_last(void* out, const void* x, Elem elem, int64_t images, int64_t height,
                                           int64_t width, int64_t channels, int64_t patch, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, PatchifyChannelsLast, out, x, images, height, width, channels, patch, stream);
}

cudaError_t launch::spatial_mean(void* out, const void* x, Elem elem, int64_t images, int64_t pixels, int64_t channels,
                                 cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, SpatialMean, out, x, images, pixels, channels, stream);
}

}  // namespace fk::cuda
