// Launchers of the CUDA linear baseline's own kernels besides cuBLASLt: the k == 0 case,
// where out[m, n] is the bias broadcast over rows (or zeros), and the GEMV form for a
// few input rows (linear_gemv.cu), which LinearLt times beside cuBLASLt.
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace fk::cuda::launch {

// out[r, j] = bias ? bias[j] : 0 for r < rows, j < n; contiguous. bias may be null.
cudaError_t linear_fill_bias(void* out, const void* bias, Elem elem, int64_t rows, int64_t n, cudaStream_t stream);

// The most input rows the GEMV form takes. At 8 rows it was 2.4-3.6x slower than
// cuBLASLt on llama-3.1-8b's decode shapes (H100, bench/RESULTS.md): each lane then holds
// one vector of a weight row in flight for eight sums, and the tensor-core GEMMs win.
inline constexpr int64_t kLinearGemvMaxRows = 4;

// Whether the GEMV form takes this problem: 0 < m <= kLinearGemvMaxRows, k a whole
// number of 16-byte vectors, x and w 16-byte aligned.
bool linear_gemv_fits(Elem elem, int64_t m, int64_t n, int64_t k, const void* x, const void* w);

// out[m, n] = x[m, k] @ w[n, k]^T (+ bias[n] when not null), row-major contiguous, fp32
// sums, the bias added in fp32 before the one rounding to `elem`. cudaErrorInvalidValue
// (nothing enqueued) when linear_gemv_fits says no.
cudaError_t linear_gemv(void* out, const void* x, const void* w, const void* bias, Elem elem, int64_t m, int64_t n,
                        int64_t k, cudaStream_t stream);

}  // namespace fk::cuda::launch
