// CUDA linear baseline: out[T, N] = input[T, K] @ weight[N, K]^T (+ bias[N]) through
// cuBLASLt, or for a few rows the GEMV kernel where LinearLt timed it faster
// (linear_lt.h); K == 0 fills the bias (or zeros) with a small kernel and T == 0 or
// N == 0 enqueues nothing, as the CPU baseline.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/linear_launch.h"
#include "kernels/cuda/ops/linear_lt.h"
#include "kernels/ops/op_util.h"

namespace fk::cuda {

void register_cuda_linear(kernels::OpRegistry& reg) {
  enum { kOut, kInput, kWeight, kBias };
  reg.add_impl({"linear", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && host::elem_of(c.arg(kInput).dtype()).has_value();
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kInput);
                  const int64_t m = x.size(0), k = x.size(1), n = c.arg(kWeight).size(0);
                  if (m == 0 || n == 0) return;
                  const launch::Elem elem = host::elem(x, "linear");
                  const void* bias = kernels::util::present(c.arg(kBias)) ? c.arg(kBias).data() : nullptr;
                  if (k == 0) {
                    host::check_launch(launch::linear_fill_bias(c.arg(kOut).data(), bias, elem, m, n, current_stream()),
                                       "linear");
                    return;
                  }
                  LinearLt::instance().matmul(c.arg(kOut).data(), x.data(), c.arg(kWeight).data(), bias, elem, m, n, k,
                                              current_stream());
                }});
}

}  // namespace fk::cuda
