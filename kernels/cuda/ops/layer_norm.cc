// CUDA layer_norm baseline: unpacks the call (result, input, weight, bias; epsilon)
// for the launcher in layer_norm.cu. The bias is a required argument of the op.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/layer_norm_launch.h"

namespace fk::cuda {

void register_cuda_layer_norm(kernels::OpRegistry& reg) {
  enum { kOut, kInput, kWeight, kBias };
  reg.add_impl({"layer_norm", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && c.arg(kInput).dim() >= 1 && c.arg(kBias).defined() &&
                         host::elem_of(c.arg(kInput).dtype()).has_value();
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kInput);
                  const int64_t hidden = x.size(-1);
                  const int64_t tokens = hidden > 0 ? x.numel() / hidden : 0;
                  host::check_launch(launch::layer_norm(c.arg(kOut).data(), x.data(), c.arg(kWeight).data(),
                                                        c.arg(kBias).data(), host::elem(x, "layer_norm"), tokens,
                                                        hidden, static_cast<float>(c.param(0)), current_stream()),
                                     "layer_norm");
                }});
}

}  // namespace fk::cuda
