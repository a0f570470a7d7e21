// CUDA rms_norm baseline: unpacks the call (result, input, weight; epsilon) for the
// launcher in rms_norm.cu.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/rms_norm_launch.h"

namespace fk::cuda {

void register_cuda_rms_norm(kernels::OpRegistry& reg) {
  enum { kOut, kInput, kWeight };
  reg.add_impl({"rms_norm", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && host::elem_of(c.arg(kInput).dtype()).has_value();
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kInput);
                  const int64_t hidden = x.size(-1);
                  host::check_launch(launch::rms_norm(c.arg(kOut).data(), x.data(), c.arg(kWeight).data(),
                                                      host::elem(x, "rms_norm"), x.numel() / hidden, hidden,
                                                      static_cast<float>(c.param(0)), current_stream()),
                                     "rms_norm");
                }});
}

}  // namespace fk::cuda
