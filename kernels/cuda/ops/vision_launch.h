// Launchers of the CUDA vision-encoder baselines (plain arguments; see elem.h and
// kernels/ops/vision.cc for the semantics). All tensors contiguous, in `elem`.
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// out [images * (height/patch) * (width/patch), channels * patch * patch] from pixels
// [images, channels, height, width]: out[b*N + py*(width/patch) + px, c*patch*patch +
// ky*patch + kx] = pixels[b, c, py*patch + ky, px*patch + kx], a bitwise copy. patch >= 1
// divides height and width (else cudaErrorInvalidValue). No-op on an empty batch.
cudaError_t patchify(void* out, const void* pixels, Elem elem, int64_t images, int64_t channels, int64_t height,
                     int64_t width, int64_t patch, cudaStream_t stream);

// out [images * (prefix_rows + patches), hidden]: for each image b, rows j < prefix_rows
// are prefix[j] + positions[j], then row prefix_rows + i is patches[b*patches + i] +
// positions[prefix_rows + i]; fp32 sums rounded once. prefix [prefix_rows, hidden] (null
// when prefix_rows is 0), patches [images * patches, hidden], positions
// [prefix_rows + patches, hidden].
cudaError_t patch_tokens(void* out, const void* patches, const void* prefix, const void* positions, Elem elem,
                         int64_t images, int64_t patches_per_image, int64_t prefix_rows, int64_t hidden,
                         cudaStream_t stream);

// x[t, j] = x[t, j] * gamma[j] for x [tokens, hidden] in place, gamma [hidden]; fp32
// product rounded once.
cudaError_t channel_scale(void* x, const void* gamma, Elem elem, int64_t tokens, int64_t hidden, cudaStream_t stream);

}  // namespace fk::cuda::launch
