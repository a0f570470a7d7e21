// silu_and_mul, CPU candidate (vLLM's silu_and_mul(out, input)), per row:
//   out[r, i] = silu(input[r, i]) * input[r, d + i],  silu(x) = x / (1 + exp(-x))
// for out [..., d] and input [..., 2d], contiguous. fp32 arithmetic, one rounding per
// output, fp16/bf16 as raw 16-bit patterns with round-to-nearest-even. Rows are split
// over at most ctx->num_threads std::threads, all joined before returning.
#include "fk_kernel.h"
#include "fk_kernel_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

using namespace fk_util;

// ---- the operator -----------------------------------------------------------------

template <typename E>
void silu_and_mul_rows(typename E::T* __restrict out, const typename E::T* __restrict x, int64_t d, int64_t begin,
                       int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const typename E::T* gate = x + r * 2 * d;
    const typename E::T* up = gate + d;
    typename E::T* outr = out + r * d;
    for (int64_t i = 0; i < d; ++i) {
      const float g = E::load(gate[i]);
      const float silu = g / (1.0f + std::exp(-g));
      outr[i] = E::store(silu * E::load(up[i]));
    }
  }
}

template <typename E>
void silu_and_mul_run(const fk_context* ctx, fk_t out, fk_t input, int64_t rows, int64_t d) {
  auto* o = static_cast<typename E::T*>(out->data);
  const auto* x = static_cast<const typename E::T*>(input->data);
  // exp costs about ten plain operations: count that in the work per row.
  for_rows(ctx->num_threads, rows, 8 * d,
           [=](int64_t begin, int64_t end) { silu_and_mul_rows<E>(o, x, d, begin, end); });
}

}  // namespace

extern "C" int fk_candidate_silu_and_mul(const fk_context* ctx, fk_t out, fk_t input) {
  if (ctx == nullptr || out == nullptr || input == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != FK_DEVICE_CPU)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: this candidate runs on the CPU");
  bool ok = out->ndim >= 1 && out->ndim <= FK_MAX_DIMS && input->ndim == out->ndim &&
            input->shape[input->ndim - 1] == 2 * out->shape[out->ndim - 1];
  for (int32_t k = 0; ok && k + 1 < out->ndim; ++k) ok = input->shape[k] == out->shape[k];
  if (!ok) return fail(ctx, FK_ERROR_INVALID, "silu_and_mul: expected out [..., d] and input [..., 2d]");
  if (out->dtype != input->dtype)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: out and input must share one dtype");
  const int64_t d = out->shape[out->ndim - 1], n = numel(out);
  if (n == 0) return FK_OK;
  const int64_t rows = n / d;
  try {
    switch (out->dtype) {
      case FK_DTYPE_F32:
        silu_and_mul_run<F32>(ctx, out, input, rows, d);
        return FK_OK;
      case FK_DTYPE_F16:
        silu_and_mul_run<F16>(ctx, out, input, rows, d);
        return FK_OK;
      case FK_DTYPE_BF16:
        silu_and_mul_run<BF16>(ctx, out, input, rows, d);
        return FK_OK;
      default:
        return fail(ctx, FK_ERROR_UNSUPPORTED, "silu_and_mul: dtype must be fp32, fp16 or bf16");
    }
  } catch (...) {
    return fail(ctx, FK_ERROR_RUNTIME, "silu_and_mul: out of memory starting worker threads");
  }
}

// The entry must have the operator's exact signature.
static_assert(std::is_same_v<decltype(&fk_candidate_silu_and_mul), fk_act_and_mul_fn>, "signature of silu_and_mul");
