// CUDA topk_softmax baseline: unpacks the call (topk_weights fp32, topk_ids int32,
// gating_output; renormalize) for the launcher in topk_softmax.cu. supports() needs
// fp32 weights and int32 ids (fp64 weights are the reference's, not a baseline's).
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/topk_softmax_launch.h"

namespace fk::cuda {

void register_cuda_topk_softmax(kernels::OpRegistry& reg) {
  enum { kWeights, kIds, kGating };
  reg.add_impl({"topk_softmax", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && host::elem_of(c.arg(kGating).dtype()).has_value() &&
                         c.arg(kWeights).dtype() == DType::kF32 && c.arg(kIds).dtype() == DType::kI32 &&
                         !c.params.empty();
                },
                [](const kernels::OpCall& c) {
                  const Tensor& g = c.arg(kGating);
                  host::check_launch(launch::topk_softmax(c.arg(kWeights).data_as<float>(),
                                                          c.arg(kIds).data_as<int32_t>(), g.data(),
                                                          host::elem(g, "topk_softmax"), g.size(0), g.size(1),
                                                          c.arg(kWeights).size(1), c.iparam(0) != 0, current_stream()),
                                     "topk_softmax");
                }});
}

}  // namespace fk::cuda
