// CUDA head_norm baseline: unpacks the call (result, input, weight, bias; epsilon,
// head_dim, kind) for the launcher in head_norm.cu.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/head_norm_launch.h"
#include "kernels/cuda/ops/host.h"

namespace fk::cuda {

void register_cuda_head_norm(kernels::OpRegistry& reg) {
  enum { kOut, kInput, kWeight, kBias };
  reg.add_impl({"head_norm", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && c.arg(kInput).dim() == 2 &&
                         host::elem_of(c.arg(kInput).dtype()).has_value();
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kInput);
                  const Tensor& b = c.arg(kBias);
                  host::check_launch(
                      launch::head_norm(c.arg(kOut).data(), x.data(), c.arg(kWeight).data(),
                                        b.defined() ? b.data() : nullptr, host::elem(x, "head_norm"), x.size(0),
                                        x.size(1), static_cast<int64_t>(c.param(1)), c.param(2) != 0.0,
                                        static_cast<float>(c.param(0)), current_stream()),
                      "head_norm");
                }});
}

}  // namespace fk::cuda
