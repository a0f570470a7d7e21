// Launchers of the CUDA ConvNeXt baselines (plain arguments; see elem.h and
// kernels/ops/conv.cc for the semantics). All tensors contiguous, channels last, in
// `elem`.
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// out [images, Ho, Wo, channels] with Ho = height + 2*padding - kernel + 1 (Wo alike):
// out[b, y, x, c] = bias[c] + sum_{ky, kx} weight[c, ky, kx] * x[b, y + ky - padding,
// x + kx - padding, c], taps outside the image skipped; x [images, height, width,
// channels], weight [channels, kernel, kernel], bias [channels] or null. fp32 sums (the
// bias, then the taps in (ky, kx) order) rounded once. cudaErrorInvalidValue unless
// kernel >= 1, padding >= 0 and Ho, Wo >= 1. No-op on an empty batch.
cudaError_t depthwise_conv2d(void* out, const void* x, const void* weight, const void* bias, Elem elem, int64_t images,
                             int64_t height, int64_t width, int64_t channels, int64_t kernel, int64_t padding,
                             cudaStream_t stream);

// ConvNeXt V2's GRN of x [images, pixels, channels] into out (same shape, not x):
// Gx[b, c] = sqrt(sum_n x[b, n, c]^2), Nx = Gx / (mean_c Gx[b, c] + eps), out = gamma[c]
// * (x * Nx[b, c]) + beta[c] + x; fp32 math, one rounding. Takes stream-ordered scratch
// (scratch.h) for the per-(image, channel) sums. cudaErrorInvalidValue unless pixels and
// channels are >= 1. No-op on an empty batch.
cudaError_t grn(void* out, const void* x, const void* gamma, const void* beta, Elem elem, int64_t images,
                int64_t pixels, int64_t channels, float eps, cudaStream_t stream);

// out [images * (height/patch) * (width/patch), channels * patch * patch] from NHWC x
// [images, height, width, channels]: out[b*N + py*(width/patch) + px, c*patch*patch +
// ky*patch + kx] = x[b, py*patch + ky, px*patch + kx, c], a bitwise copy; pixels past
// the last whole patch are not read. cudaErrorInvalidValue unless 1 <= patch <= height,
// width. No-op on an empty batch.
cudaError_t patchify_channels_last(void* out, const void* x, Elem elem, int64_t images, int64_t height, int64_t width,
                                   int64_t channels, int64_t patch, cudaStream_t stream);

// out [images, channels] = the mean over n of x [images, pixels, channels]: an fp32 sum
// divided by pixels, rounded once. Takes stream-ordered scratch when it splits the
// pixels over blocks. cudaErrorInvalidValue unless pixels >= 1.
cudaError_t spatial_mean(void* out, const void* x, Elem elem, int64_t images, int64_t pixels, int64_t channels,
                         cudaStream_t stream);

}  // namespace fk::cuda::launch
