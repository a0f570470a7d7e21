#include "kernels/cuda/ops/cuda_ops.h"

#include <mutex>

namespace fk::cuda {

void register_cuda_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    kernels::register_builtin_ops();
    auto& reg = kernels::OpRegistry::global();
    register_cuda_embedding(reg);
    register_cuda_rms_norm(reg);
    register_cuda_fused_add_rms_norm(reg);
    register_cuda_layer_norm(reg);
    register_cuda_head_norm(reg);
    register_cuda_rotary_embedding(reg);
    register_cuda_linear(reg);
    register_cuda_activations(reg);
    register_cuda_attention(reg);
    register_cuda_kv_cache_write(reg);
    register_cuda_topk_softmax(reg);
    register_cuda_fused_moe(reg);
    register_cuda_elementwise(reg);
    register_cuda_causal_conv1d(reg);
    register_cuda_selective_scan(reg);
    register_cuda_ssd_scan(reg);
    register_cuda_grouped_topk(reg);
    register_cuda_mla(reg);
    register_cuda_vision(reg);
    register_cuda_conv(reg);
  });
}

}  // namespace fk::cuda
