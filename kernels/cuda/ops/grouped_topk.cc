// CUDA grouped_topk baseline: unpacks the call (topk_weights fp32, topk_ids int32,
// gating_output, e_score_correction_bias fp32 or absent; num_expert_group, topk_group,
// renormalize, scoring, routed_scaling_factor) for the launcher in grouped_topk.cu.
// supports() needs fp32 weights and bias, int32 ids and at most
// launch::kGroupedTopkMaxGroups groups.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/grouped_topk_launch.h"
#include "kernels/cuda/ops/host.h"

namespace fk::cuda {

void register_cuda_grouped_topk(kernels::OpRegistry& reg) {
  enum { kWeights, kIds, kGating, kBias };
  enum { kGroups, kTopkGroup, kRenormalize, kScoring, kScale };
  reg.add_impl({"grouped_topk", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  const Tensor& b = c.arg(kBias);
                  return host::device_contiguous(c) && host::elem_of(c.arg(kGating).dtype()).has_value() &&
                         c.arg(kWeights).dtype() == DType::kF32 && c.arg(kIds).dtype() == DType::kI32 &&
                         c.params.size() == 5 && c.iparam(kGroups) <= launch::kGroupedTopkMaxGroups &&
                         (!b.defined() || b.numel() == 0 || b.dtype() == DType::kF32);
                },
                [](const kernels::OpCall& c) {
                  const Tensor& g = c.arg(kGating);
                  const Tensor& b = c.arg(kBias);
                  host::check_launch(
                      launch::grouped_topk(c.arg(kWeights).data_as<float>(), c.arg(kIds).data_as<int32_t>(), g.data(),
                                           b.defined() && b.numel() > 0 ? b.data_as<float>() : nullptr,
                                           host::elem(g, "grouped_topk"), g.size(0), g.size(1), c.arg(kWeights).size(1),
                                           c.iparam(kGroups), c.iparam(kTopkGroup), c.iparam(kRenormalize) != 0,
                                           c.iparam(kScoring) == 1, static_cast<float>(c.param(kScale)),
                                           current_stream()),
                      "grouped_topk");
                }});
}

}  // namespace fk::cuda
