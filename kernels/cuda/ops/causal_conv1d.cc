// CUDA causal_conv1d baseline: unpacks the call (out, x, weight, bias optional,
// conv_state; activation) for the launcher in causal_conv1d.cu. supports() needs one
// activation dtype across the tensors and a width the kernel is instantiated for.
#include "kernels/cuda/ops/causal_conv1d_launch.h"
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/ops/op_util.h"

namespace fk::cuda {

void register_cuda_causal_conv1d(kernels::OpRegistry& reg) {
  enum { kOut, kX, kWeight, kBias, kState };
  reg.add_impl({"causal_conv1d", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  if (c.args.size() != 5 || c.params.empty() || !host::device_contiguous(c)) return false;
                  const Tensor &x = c.arg(kX), &w = c.arg(kWeight);
                  const DType dt = x.dtype();
                  const bool same = c.arg(kOut).dtype() == dt && w.dtype() == dt && c.arg(kState).dtype() == dt &&
                                    (!kernels::util::present(c.arg(kBias)) || c.arg(kBias).dtype() == dt);
                  return same && host::elem_of(dt).has_value() && x.dim() == 3 && w.dim() == 2 &&
                         w.size(1) >= launch::kCausalConv1dMinWidth && w.size(1) <= launch::kCausalConv1dMaxWidth &&
                         (c.iparam(0) == 0 || c.iparam(0) == 1);
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kX);
                  const void* bias = kernels::util::present(c.arg(kBias)) ? c.arg(kBias).data() : nullptr;
                  host::check_launch(launch::causal_conv1d(c.arg(kOut).data(), x.data(), c.arg(kWeight).data(), bias,
                                                           c.arg(kState).data(), host::elem(x, "causal_conv1d"),
                                                           x.size(0), x.size(1), x.size(2), c.arg(kWeight).size(1),
                                                           c.iparam(0) == 1, current_stream()),
                                     "causal_conv1d");
                }});
}

}  // namespace fk::cuda
