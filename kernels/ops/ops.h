// Registration functions of the built-in ops, one per op file in kernels/ops/.
#pragma once

#include "kernels/op.h"

namespace fk::kernels {

void register_embedding(OpRegistry& reg);
void register_rms_norm(OpRegistry& reg);
void register_fused_add_rms_norm(OpRegistry& reg);
void register_layer_norm(OpRegistry& reg);
void register_head_norm(OpRegistry& reg);
void register_rotary_embedding(OpRegistry& reg);
void register_linear(OpRegistry& reg);
void register_activations(OpRegistry& reg);
void register_attention(OpRegistry& reg);
// cross_attention (kernels/ops/attention.cc): encoder-decoder attention.
void register_cross_attention(OpRegistry& reg);
void register_kv_cache_write(OpRegistry& reg);
void register_topk_softmax(OpRegistry& reg);
void register_fused_moe(OpRegistry& reg);
void register_elementwise(OpRegistry& reg);
void register_causal_conv1d(OpRegistry& reg);
void register_selective_scan(OpRegistry& reg);
void register_ssd_scan(OpRegistry& reg);
void register_grouped_topk(OpRegistry& reg);
// mla_cache_write, head_linear and mla_attention (kernels/ops/mla.cc).
void register_mla(OpRegistry& reg);
// patchify, patch_tokens and channel_scale (kernels/ops/vision.cc).
void register_vision(OpRegistry& reg);
// depthwise_conv2d, grn, patchify_channels_last and spatial_mean (kernels/ops/conv.cc).
void register_conv(OpRegistry& reg);

}  // namespace fk::kernels
