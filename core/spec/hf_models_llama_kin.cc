// Llama's relatives that differ in details only: OLMo (LayerNorm without weight or
// bias), OLMoE (OLMo 2's full-width q/k norm over a sparse MoE), Helium (GPT-J-style
// rope), Seed-OSS (separate bias switches), GLM and GLM-4 (partial GPT-J-style rope,
// fused gate_up; GLM-4 normalises each branch's output too), GraniteMoe and
// GraniteMoeShared (Granite's muP scales over a top-k-then-softmax MoE, with a shared
// SwiGLU expert), Arcee (an ungated squared-ReLU MLP) and Nemotron (the same MLP,
// LayerNorm1P: a LayerNorm scaling by 1 + w, rope on half of each head), SmolLM3 (every
// no_rope_layer_interval-th layer without rope).
#include "core/spec/hf_models.h"

#include <fmt/format.h>
#include <algorithm>

namespace fk::spec::hf {
namespace {

void refuse_clip_qkv(ConfigReader& r) {
  if (const Json* clip = r.get("clip_qkv"); clip != nullptr && !clip->is_null())
    r.fail_value("clip_qkv", *clip, "null (clamping q, k and v is not supported)");
}

void every_layer_full(ConfigReader& r, Architecture& a) {
  set_layer_pattern(r, a, uniform(a.num_hidden_layers, LayerType::kFull), std::nullopt, "sliding_window");
}

// The o projection of these models is [hidden, heads x head_dim] only when the two agree
// (HF builds it hidden x hidden, or sizes a norm by hidden).
void heads_span_hidden(ConfigReader& r, const Architecture& a, const char* why) {
  if (a.num_attention_heads * a.head_dim != a.hidden_size)
    r.fail("head_dim", fmt::format("found {} (x {} heads = {}), expected hidden_size / num_attention_heads = {} ({})",
                                   a.head_dim, a.num_attention_heads, a.num_attention_heads * a.head_dim,
                                   a.hidden_size / a.num_attention_heads, why));
}

// GLM and GLM-4: q/k/v bias (attention_bias, default true), none on o; rope on the first
// partial_rotary_factor (default 0.5) of each head with adjacent pairs rotated.
void glm_body(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a,
                    {.max_position_embeddings = 131072,
                     .rms_norm_eps = 1.5625e-7,
                     .num_key_value_heads = 2,
                     .head_dim = 128,
                     .vocab_size = 151552});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  a.attention.qkv_bias = r.boolean_or("attention_bias", true);
  a.attention.out_bias = false;
  r.ignore({"is_decoder"});
  every_layer_full(r, a);
  partial_rope(r, a, 0.5);
  a.position.rope_style = RopeStyle::kGptj;  // rotate_half pairs x[0::2] with x[1::2]
}

// GraniteMoe's sparse layers: num_local_experts experts of intermediate_size, top-k of
// the router logits then a softmax over those k (the same as Mixtral's renormalised top-k).
void granite_moe_body(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 2048, .rms_norm_eps = 1e-6, .vocab_size = 32000});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  r.ignore({"is_decoder"});
  every_layer_full(r, a);
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
  read_granite_scales(r, a);
  a.moe.num_experts = r.integer_or("num_local_experts", 8, 2);
  a.moe.experts_per_token = r.integer_or("num_experts_per_tok", 2, limits::kExpertsPerToken);
  a.moe.moe_intermediate_size = a.intermediate_size;  // per expert
  a.moe.renormalize = true;
}

}  // namespace

void fill_olmo(ConfigReader& r, Architecture& a) {
  // OlmoLayerNorm: F.layer_norm without weight or bias, eps fixed at 1e-5.
  read_decoder_core(
      r, a, {.max_position_embeddings = 2048, .rms_norm_eps = 1e-5, .vocab_size = 50304, .norm_eps_key = nullptr});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  refuse_clip_qkv(r);
  r.ignore({"is_decoder", "pretraining_tp"});
  a.norm.kind = NormKind::kLayerNorm;
  a.norm.weight = false;
  a.norm.bias = false;
  every_layer_full(r, a);
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

void fill_olmoe(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 4096, .rms_norm_eps = 1e-5, .vocab_size = 50304});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  heads_span_hidden(r, a, "OlmoeAttention sizes its q norm by hidden_size");
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  refuse_clip_qkv(r);
  r.ignore({"is_decoder"});
  a.attention.qk_norm = true;
  a.attention.qk_norm_full = true;  // q_norm over hidden_size, k_norm over kv heads x head_dim
  every_layer_full(r, a);
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
  // num_local_experts is the attribute_map alias of num_experts.
  const char* experts_key = r.has_value("num_local_experts") ? "num_local_experts" : "num_experts";
  a.moe.num_experts = r.integer_or(experts_key, 64, 2);
  a.moe.experts_per_token = r.integer_or("num_experts_per_tok", 8, limits::kExpertsPerToken);
  a.moe.moe_intermediate_size = a.intermediate_size;  // per expert
  a.moe.renormalize = r.boolean_or("norm_topk_prob", false);
}

void fill_helium(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a,
                    {.max_position_embeddings = 4096,
                     .rms_norm_eps = 1e-8,
                     .num_key_value_heads = 20,
                     .head_dim = 128,
                     .vocab_size = 48000});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  heads_span_hidden(r, a, "HeliumAttention's o_proj is hidden_size x hidden_size");
  a.attention.qkv_bias = r.boolean_or("attention_bias", false);
  a.attention.out_bias = false;  // HeliumAttention: o_proj without bias
  a.mlp.bias = r.boolean_or("mlp_bias", false);
  r.ignore({"is_decoder"});
  every_layer_full(r, a);
  apply_rope(r, a, read_rope(r, 100000.0), std::nullopt, false);
  a.position.rope_style = RopeStyle::kGptj;  // Helium's rotate_half pairs x[0::2] with x[1::2]
}

void fill_seed_oss(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a,
                    {.max_position_embeddings = 524288,
                     .rms_norm_eps = 1e-6,
                     .num_key_value_heads = 8,
                     .head_dim = 128,
                     .vocab_size = 155136});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  a.attention.qkv_bias = r.boolean_or("attention_bias", true);
  a.attention.out_bias = r.boolean_or("attention_out_bias", false);
  a.mlp.bias = r.boolean_or("mlp_bias", false);
  r.ignore({"is_decoder", "pretraining_tp", "residual_dropout"});  // dropout: training only
  every_layer_full(r, a);
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

void fill_glm(ConfigReader& r, Architecture& a) { glm_body(r, a); }

// GLM-4: GLM's layer with each branch's output normalised before it joins the stream
// (post_self_attn_layernorm, post_mlp_layernorm): the sandwich placement.
void fill_glm4(ConfigReader& r, Architecture& a) {
  glm_body(r, a);
  a.norm.placement = NormPlacement::kSandwich;
}

void fill_granitemoe(ConfigReader& r, Architecture& a) { granite_moe_body(r, a); }

// GraniteMoeShared: a SwiGLU shared expert of shared_intermediate_size (0: none) on the
// same normalised input, added to the routed experts' output before the residual
// multiplier.
void fill_granitemoeshared(ConfigReader& r, Architecture& a) {
  granite_moe_body(r, a);
  const int64_t shared = r.integer_or("shared_intermediate_size", 0, 0);
  if (shared > 0) {
    a.moe.shared_experts = 1;
    a.moe.shared_intermediate_size = shared;
  }
}

// SmolLM3: Llama's layers; layer i has rope when no_rope_layers[i] is 1 (default: unless
// (i + 1) % no_rope_layer_interval == 0). With use_sliding_window and a window, the NoPE
// layers slide (SmolLM3Config's derived layer_types).
void fill_smollm3(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a,
                    {.max_position_embeddings = 32768,
                     .rms_norm_eps = 1e-6,
                     .tie_word_embeddings = true,
                     .num_key_value_heads = 4,
                     .vocab_size = 128256});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  a.mlp.bias = r.boolean_or("mlp_bias", false);
  r.ignore({"is_decoder", "pretraining_tp", "max_window_layers"});  // SmolLM3 reads no max_window_layers
  const size_t layers = static_cast<size_t>(a.num_hidden_layers);
  std::vector<bool> rope(layers, true);
  if (const Json* list = r.get("no_rope_layers"); list != nullptr && !list->is_null()) {
    if (!list->is_array() || list->size() != layers)
      r.fail_value("no_rope_layers", *list, fmt::format("a list of {} entries, 1 (rope) or 0 (none)", layers));
    for (size_t i = 0; i < layers; ++i) {
      const Json& v = (*list)[i];
      if (!v.is_number_integer() || (v.get<int64_t>() != 0 && v.get<int64_t>() != 1))
        r.fail_value(fmt::format("no_rope_layers[{}]", i), v, "1 (the layer has rope) or 0 (it has none)");
      rope[i] = v.get<int64_t>() == 1;
    }
    r.ignore({"no_rope_layer_interval"});  // read only to derive no_rope_layers
  } else {
    const int64_t every = r.integer_or("no_rope_layer_interval", 4, 1);
    for (size_t i = 0; i < layers; ++i) rope[i] = (static_cast<int64_t>(i) + 1) % every != 0;
  }
  if (std::find(rope.begin(), rope.end(), true) == rope.end())
    r.fail("no_rope_layers", "leaves no layer with rope (a model without rope is not SmolLM3's)");
  const bool use_window = r.boolean_or("use_sliding_window", false);
  const Json* w = r.get("sliding_window");
  const std::optional<int64_t> window =
      w == nullptr || w->is_null() ? std::nullopt : r.optional_integer("sliding_window");
  auto types = read_layer_types(r, a.num_hidden_layers);
  if (!types) {
    types = std::vector<LayerType>();
    for (size_t i = 0; i < layers; ++i)
      types->push_back(use_window && window && !rope[i] ? LayerType::kSliding : LayerType::kFull);
  }
  const bool any_sliding = std::find(types->begin(), types->end(), LayerType::kSliding) != types->end();
  if (any_sliding && !use_window)
    r.fail("use_sliding_window", "found false, expected true (layer_types lists sliding_attention layers)");
  set_layer_pattern(r, a, *types, use_window ? window : std::nullopt, "sliding_window");
  set_rope_layers(a, rope);
  apply_rope(r, a, read_rope(r, 2000000.0), std::nullopt, false);
}

void fill_arcee(ConfigReader& r, Architecture& a) {
  read_decoder_core(
      r, a, {.max_position_embeddings = 4096, .rms_norm_eps = 1e-5, .vocab_size = 32000, .hidden_act = "relu2"});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  a.mlp.gated = false;  // ArceeMLP: down_proj(act(up_proj(x)))
  a.mlp.bias = r.boolean_or("mlp_bias", false);
  r.ignore({"is_decoder", "pretraining_tp"});
  every_layer_full(r, a);
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

void fill_nemotron(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a,
                    {.max_position_embeddings = 4096,
                     .rms_norm_eps = 1e-5,
                     .vocab_size = 256000,
                     .hidden_act = "relu2",
                     .norm_eps_key = "norm_eps"});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  a.mlp.gated = false;  // NemotronMLP: down_proj(act(up_proj(x)))
  a.mlp.bias = r.boolean_or("mlp_bias", false);
  a.norm.kind = NormKind::kLayerNorm;  // NemotronLayerNorm1P: F.layer_norm(x, w + 1, b)
  a.norm.weight_offset = 1.0;
  r.ignore({"is_decoder"});
  every_layer_full(r, a);
  partial_rope(r, a, 0.5);
}

}  // namespace fk::spec::hf
