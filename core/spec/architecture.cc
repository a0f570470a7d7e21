#include "core/spec/architecture.h"

#include <algorithm>
#include <cmath>

namespace fk::spec {

LayerType Architecture::layer_type(int64_t layer) const {
  if (attention.layer_types.empty())
    return attention.sliding_window ? LayerType::kSliding : LayerType::kFull;
  return attention.layer_types[static_cast<size_t>(layer) % attention.layer_types.size()];
}

bool Architecture::layer_has_rope(int64_t layer) const {
  if (position.kind != PositionKind::kRope) return false;
  return position.rope_layers.empty() || position.rope_layers[static_cast<size_t>(layer) % position.rope_layers.size()];
}

bool Architecture::layer_has_attention_norm(int64_t layer) const { return layer != 0 || norm.first_attention_norm; }

bool Architecture::layer_is_moe(int64_t layer) const {
  return moe.enabled() && layer >= moe.first_dense_layers &&
         std::find(moe.dense_layers.begin(), moe.dense_layers.end(), layer) == moe.dense_layers.end();
}

int64_t Architecture::rotary_dim() const {
  if (position.kind != PositionKind::kRope) return 0;
  return static_cast<int64_t>(std::llround(static_cast<double>(head_dim) * position.partial_rotary_factor));
}

bool Architecture::qk_norm_has_bias() const {
  return attention.qk_norm && norm.kind == NormKind::kLayerNorm && attention.qk_norm_bias.value_or(norm.bias);
}

double Architecture::attention_scale() const {
  if (attention.scale) return *attention.scale;
  const double d = attention.query_pre_attn_scalar ? *attention.query_pre_attn_scalar
                                                   : static_cast<double>(head_dim);
  return 1.0 / std::sqrt(d);
}

std::string Architecture::attention_kind() const {
  if (num_key_value_heads == num_attention_heads) return "MHA";
  if (num_key_value_heads == 1) return "MQA";
  return "GQA";
}

std::string_view norm_kind_name(NormKind k) { return k == NormKind::kRmsNorm ? "rmsnorm" : "layernorm"; }

std::string_view norm_placement_name(NormPlacement p) {
  switch (p) {
    case NormPlacement::kPre: return "pre";
    case NormPlacement::kPost: return "post";
    case NormPlacement::kSandwich: return "sandwich";
    case NormPlacement::kPostBranch: return "post_branch";
    case NormPlacement::kParallel: return "parallel";
    case NormPlacement::kParallelShared: return "parallel_shared";
  }
  return "?";
}

std::string_view activation_name(Activation a) {
  switch (a) {
    case Activation::kSilu: return "silu";
    case Activation::kGelu: return "gelu";
    case Activation::kGeluTanh: return "gelu_tanh";
    case Activation::kRelu: return "relu";
    case Activation::kRelu2:
      return "relu2";
  }
  return "?";
}

std::string_view layer_type_name(LayerType t) { return t == LayerType::kFull ? "full" : "sliding"; }

std::string_view position_kind_name(PositionKind k) {
  switch (k) {
    case PositionKind::kRope: return "rope";
    case PositionKind::kLearned: return "learned";
    case PositionKind::kNone: return "none";
  }
  return "?";
}

std::string rope_layers_text(const std::vector<bool>& layers) {
  std::string out = "[";
  for (size_t i = 0; i < layers.size(); ++i) out += (i ? ", " : "") + std::string(layers[i] ? "rope" : "nope");
  return out + "]";
}

std::string_view rope_style_name(RopeStyle s) { return s == RopeStyle::kNeox ? "neox" : "gptj"; }

std::string_view rope_scaling_name(RopeScalingType t) {
  switch (t) {
    case RopeScalingType::kNone: return "none";
    case RopeScalingType::kLinear: return "linear";
    case RopeScalingType::kLlama3: return "llama3";
    case RopeScalingType::kYarn: return "yarn";
  }
  return "?";
}

std::string_view head_kind_name(HeadKind k) { return k == HeadKind::kLm ? "lm" : "none"; }
std::string_view moe_scoring_name(MoeScoring s) { return s == MoeScoring::kSigmoid ? "sigmoid" : "softmax"; }

}  // namespace fk::spec
