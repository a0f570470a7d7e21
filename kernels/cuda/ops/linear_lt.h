// cuBLASLt state of the CUDA linear baseline: one cublasLt handle and one 32 MiB
// workspace per device (made on first use, kept for the life of the process), and the
// algorithm per problem (device, m, n, k, dtype, bias, output type, batch count, pointer
// alignment), chosen once and cached. cublasLtMatmulAlgoGetHeuristic offers up to 8
// configurations; at the problem's first call outside a stream capture each is timed on
// that call's buffers (cold L2, the median of 5 to 25 calls) and the fastest is kept
// when it beats the heuristic's first by more than 2%. A plain matmul of at most
// launch::kLinearGemvMaxRows rows (a decode step's) also times the GEMV form
// (linear_gemv.cu), which streams each weight row once for all rows, and keeps it by the
// same rule (FK_LINEAR_GEMV=0 leaves it out). A problem first seen inside a capture runs
// the heuristic's first until then. FK_CUBLASLT_AUTOTUNE=0 keeps the heuristic's first
// untimed (and no GEMV form). Thread-safe: one mutex guards the maps; the timing and the
// matmul itself run outside it.
//
// Invariant: the calls on one device share that device's workspace, so they must be
// ordered with each other (one stream per device, as the CUDA backend uses); two
// streams of one device running linear at the same time would race on it.
// cublasLt.h stays out of this header.
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fk::cuda {

class LinearLt {
 public:
  static LinearLt& instance();
  LinearLt(const LinearLt&) = delete;
  LinearLt& operator=(const LinearLt&) = delete;

  // Enqueues out[m, n] = x[m, k] @ w[n, k]^T (+ bias[n] when bias is not null) on
  // `stream`. Only the call that tunes a problem synchronises (it waits for the stream,
  // and writes `out` several times). Row-major contiguous arrays of `elem` on the
  // current device; fp32 accumulation (CUBLAS_COMPUTE_32F, no TF32); the bias is added
  // in fp32 by the epilogue before the one rounding to `elem`. Needs m, n, k > 0.
  // Throws fk::Error(kRuntime) naming the failing cuBLASLt or CUDA call.
  void matmul(void* out, const void* x, const void* w, const void* bias, launch::Elem elem, int64_t m, int64_t n,
              int64_t k, cudaStream_t stream);

  // Pointer-array batched: for each i < batch, out[i][m, n] = x[i][m, k] @ w[i][n, k]^T,
  // `out`, `x` and `w` device arrays of `batch` device pointers (each matrix row-major
  // contiguous, at least `align` bytes aligned); the output fp32 when f32_out, else
  // `elem`. The algorithm is chosen and tuned as matmul()'s (the first call outside a
  // capture times the configurations on its own buffers). Returns false, enqueuing
  // nothing, when cuBLASLt offers no configuration for the problem (remembered).
  bool matmul_batched(void* const* out, const void* const* x, const void* const* w, launch::Elem elem, bool f32_out,
                      int64_t m, int64_t n, int64_t k, int64_t batch, uint32_t align, cudaStream_t stream);

  // One line on the algorithm cached for this problem on the current device
  // ("cublasLt algo 66 tile 18 ...: the fastest of 8 configurations timed (algo 66 tile
  // 20: 41.2 us, ...)", or "GEMV kernel (linear_gemv.cu, ...): the fastest of 9 ..."),
  // or "no cuBLASLt algorithm chosen yet".
  std::string describe(launch::Elem elem, int64_t m, int64_t n, int64_t k, bool bias) const;

  // describe()'s line for every problem seen so far, on every device, prefixed with its
  // device, dtype and m n k (fk-bench-ops lists them).
  std::vector<std::string> plans() const;

 private:
  LinearLt();
  struct Problem {
    void* out;  // for a batch, the array of output pointers
    const void* x;
    const void* w;
    const void* bias;
    launch::Elem elem;
    int64_t m, n, k;
    bool f32_out;
    int64_t batch;  // 0: one matrix each
    uint32_t align;
  };
  bool run(const Problem& p, cudaStream_t stream);
  struct State;
  State* state_;  // never freed: handles and workspaces live until the process exits
};

}  // namespace fk::cuda
