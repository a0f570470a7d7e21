// Registration of the CUDA baselines, one function per op file in kernels/cuda/ops/
// (the CUDA counterpart of kernels/ops/ops.h). Each adds an OpImpl named "cuda" with
// device kCuda, a capability query (supports) and run (see host.h for its contract).
#pragma once

#include "kernels/op.h"

namespace fk::cuda {

void register_cuda_embedding(kernels::OpRegistry& reg);
void register_cuda_rms_norm(kernels::OpRegistry& reg);
void register_cuda_fused_add_rms_norm(kernels::OpRegistry& reg);
void register_cuda_layer_norm(kernels::OpRegistry& reg);
void register_cuda_head_norm(kernels::OpRegistry& reg);
void register_cuda_rotary_embedding(kernels::OpRegistry& reg);
void register_cuda_linear(kernels::OpRegistry& reg);
void register_cuda_activations(kernels::OpRegistry& reg);
void register_cuda_attention(kernels::OpRegistry& reg);
void register_cuda_kv_cache_write(kernels::OpRegistry& reg);
void register_cuda_topk_softmax(kernels::OpRegistry& reg);
void register_cuda_fused_moe(kernels::OpRegistry& reg);
void register_cuda_elementwise(kernels::OpRegistry& reg);
void register_cuda_causal_conv1d(kernels::OpRegistry& reg);
void register_cuda_selective_scan(kernels::OpRegistry& reg);
void register_cuda_ssd_scan(kernels::OpRegistry& reg);
void register_cuda_grouped_topk(kernels::OpRegistry& reg);
void register_cuda_mla(kernels::OpRegistry& reg);
void register_cuda_vision(kernels::OpRegistry& reg);
void register_cuda_conv(kernels::OpRegistry& reg);

// Calls every register_cuda_* function once (idempotent).
void register_cuda_ops();

}  // namespace fk::cuda
