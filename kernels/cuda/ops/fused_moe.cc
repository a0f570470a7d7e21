// CUDA fused_moe baseline: unpacks the call (out, hidden_states, w13, w2, topk_weights
// fp32, topk_ids int32; activation) for the launcher in fused_moe.cu, and owns its
// scratch (scratch.h: stream-ordered on current_stream(), allocated before the launch
// and freed after it, so the memory lives exactly as long as the enqueued work).
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/fused_moe_launch.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/scratch.h"

namespace fk::cuda {

void register_cuda_fused_moe(kernels::OpRegistry& reg) {
  enum { kOut, kHidden, kW13, kW2, kWeights, kIds };
  reg.add_impl({"fused_moe", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && host::elem_of(c.arg(kHidden).dtype()).has_value() &&
                         c.arg(kWeights).dtype() == DType::kF32 && c.arg(kIds).dtype() == DType::kI32 &&
                         !c.params.empty() && c.arg(kIds).numel() <= 0x7fffffff;
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kHidden);
                  const launch::Elem elem = host::elem(x, "fused_moe");
                  const int64_t tokens = x.size(0), hidden = x.size(1), experts = c.arg(kW13).size(0);
                  const int64_t inter = c.arg(kW13).size(1) / 2, topk = c.arg(kIds).size(1);
                  const cudaStream_t stream = current_stream();
                  const size_t bytes = launch::fused_moe_workspace_bytes(elem, tokens, hidden, experts, inter, topk);
                  void* workspace = nullptr;
                  if (bytes > 0) FK_CUDA_CHECK(scratch_alloc(&workspace, bytes, stream));
                  cudaError_t status = launch::fused_moe(
                      c.arg(kOut).data(), x.data(), c.arg(kW13).data(), c.arg(kW2).data(),
                      c.arg(kWeights).data_as<float>(), c.arg(kIds).data_as<int32_t>(), elem, tokens, hidden, experts,
                      inter, topk, static_cast<int>(c.iparam(0)), workspace, stream);
                  if (workspace != nullptr) {
                    const cudaError_t freed = scratch_free(workspace, stream);
                    if (status == cudaSuccess) status = freed;
                  }
                  host::check_launch(status, "fused_moe");
                }});
}

}  // namespace fk::cuda
