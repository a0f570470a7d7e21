// Gemma (1), Gemma 2 and Gemma 3 (text). Gemma 2 and 3: sandwich norms scaled by (1 + w), embeddings x
// sqrt(hidden), GeGLU (hidden_activation), query_pre_attn_scalar, soft-capping, and
// interleaved sliding / full layers. Gemma 3 adds QK-norm and a separate, unscaled
// rope for sliding layers (rope_local_base_freq, or the sliding_attention entry of
// 5.x rope_parameters); its rope scaling applies to full layers only.
#include "core/spec/hf_models.h"

#include <fmt/format.h>

namespace fk::spec::hf {
namespace {

void gemma_common(ConfigReader& r, Architecture& a, const DecoderDefaults& d, std::optional<double> attn_softcap,
                  std::optional<double> final_softcap) {
  read_decoder_core(r, a, d);
  // Gemma 2/3 read hidden_activation; hidden_act is a legacy key their MLP never uses.
  r.ignore({"hidden_act", "is_decoder"});
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  a.attention.query_pre_attn_scalar = r.number_or("query_pre_attn_scalar", 256.0);
  a.attention.logit_softcap = r.optional_number_or("attn_logit_softcapping", attn_softcap);
  a.head.logit_softcap = r.optional_number_or("final_logit_softcapping", final_softcap);
  if (a.attention.query_pre_attn_scalar && *a.attention.query_pre_attn_scalar <= 0)
    r.fail("query_pre_attn_scalar", "found a number <= 0, expected a positive number");
  if (a.attention.logit_softcap && *a.attention.logit_softcap <= 0)
    r.fail("attn_logit_softcapping",
           fmt::format("found {}, expected a positive number or null", *a.attention.logit_softcap));
  if (a.head.logit_softcap && *a.head.logit_softcap <= 0)
    r.fail("final_logit_softcapping",
           fmt::format("found {}, expected a positive number or null", *a.head.logit_softcap));
  r.require_inert("use_bidirectional_attention", "the spec's sliding-window layers are causal");
  a.norm.placement = NormPlacement::kSandwich;
  a.norm.weight_offset = 1.0;  // Gemma RMSNorm scales by (1 + w)
  a.embedding.scale_by_sqrt_hidden = true;
}

}  // namespace

// Gemma (1): pre-norm (not sandwich) with (1 + w) RMSNorm, scaled embeddings, GeGLU,
// every layer full attention, no soft-capping. The MLP's activation is
// hidden_activation when given, else hidden_act (transformers 5; 4.x ignored
// hidden_act and used gelu_pytorch_tanh when hidden_activation was null).
void fill_gemma(ConfigReader& r, Architecture& a) {
  std::string act_key = "hidden_act";
  if (const Json* v = r.get("hidden_activation"); v != nullptr && !v->is_null()) act_key = "hidden_activation";
  read_decoder_core(r, a,
                    {.max_position_embeddings = 8192,
                     .rms_norm_eps = 1e-6,
                     .tie_word_embeddings = true,
                     .num_key_value_heads = 16,
                     .head_dim = 256,
                     .vocab_size = 256000,
                     .hidden_act_key = act_key.c_str(),
                     .hidden_act = "gelu_pytorch_tanh"});
  r.ignore({"hidden_act", "hidden_activation", "is_decoder"});
  r.require_inert("use_bidirectional_attention", "the spec's decoder layers are causal");
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  a.norm.weight_offset = 1.0;
  a.embedding.scale_by_sqrt_hidden = true;
  set_layer_pattern(r, a, std::vector<LayerType>(static_cast<size_t>(a.num_hidden_layers), LayerType::kFull),
                    std::nullopt, "sliding_window");
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

void fill_gemma2(ConfigReader& r, Architecture& a) {
  gemma_common(r, a,
               {.max_position_embeddings = 8192,
                .rms_norm_eps = 1e-6,
                .tie_word_embeddings = true,
                .num_key_value_heads = 4,
                .head_dim = 256,
                .hidden_act_key = "hidden_activation",
                .hidden_act = "gelu_pytorch_tanh"},
               50.0, 30.0);
  const std::optional<int64_t> window = read_window(r, 4096);
  // Some 4.x files repeat the window as sliding_window_size.
  if (const Json* s = r.get("sliding_window_size");
      s != nullptr && !s->is_null() && r.optional_integer("sliding_window_size") != window)
    r.fail_value("sliding_window_size", *s,
                 fmt::format("the same value as sliding_window ({})", window ? std::to_string(*window) : "null"));
  // 4.x Gemma2DecoderLayer: layer i slides when i is even.
  const auto types = read_layer_types(r, a.num_hidden_layers).value_or(even_layers_slide(a.num_hidden_layers));
  set_layer_pattern(r, a, types, window, "sliding_window");
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

void fill_gemma3_text(ConfigReader& r, Architecture& a) {
  gemma_common(r, a,
               {.max_position_embeddings = 131072,
                .rms_norm_eps = 1e-6,
                .tie_word_embeddings = true,
                .num_key_value_heads = 4,
                .head_dim = 256,
                .vocab_size = 262208,
                .hidden_act_key = "hidden_activation",
                .hidden_act = "gelu_pytorch_tanh"},
               std::nullopt, std::nullopt);
  a.attention.qk_norm = true;  // Gemma3Attention q_norm / k_norm
  const std::optional<int64_t> window = read_window(r, 4096);
  // 4.x: sliding_window_pattern (5.x keeps it as _sliding_window_pattern beside
  // layer_types); layer i slides unless (i + 1) % pattern == 0.
  std::optional<int64_t> pattern;
  for (const char* k : {"sliding_window_pattern", "_sliding_window_pattern"}) {
    const auto p = r.optional_integer(k);
    if (p && pattern && *p != *pattern)
      r.fail(k, fmt::format("found {}, expected the same as sliding_window_pattern ({})", *p, *pattern));
    if (p) pattern = p;
  }
  auto types = read_layer_types(r, a.num_hidden_layers);
  if (!types) {
    if (!pattern) {
      pattern = 6;
      r.note_default("sliding_window_pattern", "6");
    }
    types.emplace();
    for (int64_t l = 0; l < a.num_hidden_layers; ++l)
      types->push_back((l + 1) % *pattern != 0 ? LayerType::kSliding : LayerType::kFull);
  }
  set_layer_pattern(r, a, *types, window, "sliding_window");

  const RopeRead rope = read_rope(r, 1e6);
  std::optional<double> local;
  if (rope.keyed) {
    if (const Json* f = r.get("rope_local_base_freq"); f != nullptr && !f->is_null()) {
      const double v = r.number("rope_local_base_freq");
      if (rope.sliding_theta && v != *rope.sliding_theta)
        r.fail_value("rope_local_base_freq", *f,
                     fmt::format("the same as rope_parameters.sliding_attention.rope_theta ({})", *rope.sliding_theta));
    }
  } else {
    local = r.number_or("rope_local_base_freq", 10000.0);
    if (*local <= 0) r.fail("rope_local_base_freq", "found a number <= 0, expected a positive number");
  }
  apply_rope(r, a, rope, local, false);
}

}  // namespace fk::spec::hf
