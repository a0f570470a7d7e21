// CUDA fused_add_rms_norm baseline: unpacks the call (input and residual, both in
// place; weight; epsilon) for the launcher in fused_add_rms_norm.cu.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/fused_add_rms_norm_launch.h"
#include "kernels/cuda/ops/host.h"

namespace fk::cuda {

void register_cuda_fused_add_rms_norm(kernels::OpRegistry& reg) {
  enum { kInput, kResidual, kWeight };
  reg.add_impl({"fused_add_rms_norm", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && c.arg(kInput).dim() >= 1 &&
                         host::elem_of(c.arg(kInput).dtype()).has_value();
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kInput);
                  const int64_t hidden = x.size(-1);
                  const int64_t tokens = hidden > 0 ? x.numel() / hidden : 0;
                  host::check_launch(launch::fused_add_rms_norm(x.data(), c.arg(kResidual).data(),
                                                                c.arg(kWeight).data(), host::elem(x, "fused_add_rms_norm"),
                                                                tokens, hidden, static_cast<float>(c.param(0)),
                                                                current_stream()),
                                     "fused_add_rms_norm");
                }});
}

}  // namespace fk::cuda
