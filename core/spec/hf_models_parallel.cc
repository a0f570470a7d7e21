// Decoders whose attention and MLP read the same layer input (norm.placement parallel
// or parallel_shared): GPT-NeoX (two LayerNorms, use_parallel_residual; sequential
// pre-norm when false), Phi (Phi-1/1.5/2: one LayerNorm, partial rotary, LM head with
// bias) and GPT-J (one LayerNorm, GPT-J-style rotary on the first rotary_dim
// dimensions, LM head with bias). All three: LayerNorm with bias, an ungated MLP with
// bias, multi-head attention, rope. And Cohere (Command R): one LayerNorm without a
// bias feeding attention and a gated MLP, GPT-J-style rope, logits x logit_scale.
#include "core/spec/architecture_write.h"
#include "core/spec/hf_models.h"

#include <fmt/format.h>
#include <algorithm>

namespace fk::spec::hf {
namespace {

// What the three share: LayerNorm, ungated biased MLP, full attention in every layer.
void parallel_common(ConfigReader& r, Architecture& a) {
  a.norm.kind = NormKind::kLayerNorm;
  a.norm.weight_offset = 0.0;
  a.mlp.gated = false;
  a.mlp.bias = true;
  a.attention.causal = true;
  a.head.kind = HeadKind::kLm;
  a.head.final_norm = true;
  set_layer_pattern(r, a, std::vector<LayerType>(static_cast<size_t>(a.num_hidden_layers), LayerType::kFull),
                    std::nullopt, "sliding_window");
}

// A partial rotary factor given by a model's own key (`key`: rotary_pct, or rotary_dim
// / head_dim) must agree with the one rope_parameters (5.x) or partial_rotary_factor
// carry, when those are given too.
void merge_partial(ConfigReader& r, RopeRead& rope, const char* key, double value, bool rope_has_partial) {
  if (rope_has_partial && rope.partial_rotary_factor != value)
    r.fail(key, fmt::format("gives a rotary fraction of {}, but rope_parameters.partial_rotary_factor is {}",
                            yaml_float_text(value), yaml_float_text(rope.partial_rotary_factor)));
  rope.partial_rotary_factor = value;
}

bool rope_gives_partial(ConfigReader& r) {
  if (r.has_value("partial_rotary_factor")) return true;
  const Json* p = r.get("rope_parameters");
  return p != nullptr && p->is_object() && p->contains("partial_rotary_factor") &&
         !p->at("partial_rotary_factor").is_null();
}

// The value of an optional numeric key: nullopt when absent or null.
std::optional<double> number_if(ConfigReader& r, const char* key) {
  const Json* v = r.get(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return r.number(key);
}

// The class defaults of a multi-head config class without a kv-head key (GPT-NeoX,
// Persimmon).
struct MhaDefaults {
  int64_t hidden, layers, heads, intermediate, vocab, max_positions;
  const char* hidden_act;
};

// hidden_size, num_hidden_layers and num_attention_heads (as many kv heads as heads,
// head_dim from them), intermediate_size, vocab_size, max_position_embeddings,
// layer_norm_eps, hidden_act and tie_word_embeddings, with the class defaults given.
void read_mha_core(ConfigReader& r, Architecture& a, const MhaDefaults& d) {
  a.hidden_size = r.integer_or("hidden_size", d.hidden, limits::kHiddenSize);
  a.num_hidden_layers = r.integer_or("num_hidden_layers", d.layers, limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer_or("num_attention_heads", d.heads, limits::kHeads);
  if (a.hidden_size % a.num_attention_heads != 0)
    r.fail("num_attention_heads",
           fmt::format("found {}, expected a divisor of hidden_size ({})", a.num_attention_heads, a.hidden_size));
  a.num_key_value_heads = a.num_attention_heads;
  a.head_dim = a.hidden_size / a.num_attention_heads;
  a.intermediate_size = r.integer_or("intermediate_size", d.intermediate, limits::kIntermediateSize);
  a.vocab_size = r.integer_or("vocab_size", d.vocab, limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("max_position_embeddings", d.max_positions, limits::kMaxPositionEmbeddings);
  a.norm.eps = r.number_or("layer_norm_eps", 1e-5, limits::kNormEps);
  a.mlp.activation = activation_from(r, "hidden_act", r.string_or("hidden_act", d.hidden_act));
  a.embedding.tied = r.boolean_or("tie_word_embeddings", false);
}

}  // namespace

void partial_rope(ConfigReader& r, Architecture& a, double default_fraction, double default_theta) {
  const bool given = rope_gives_partial(r);
  RopeRead rope = read_rope(r, default_theta);
  if (!given) {
    rope.partial_rotary_factor = default_fraction;
    r.note_default("partial_rotary_factor", yaml_float_text(default_fraction));
  }
  apply_rope(r, a, rope, std::nullopt, true);
}

void fill_gpt_neox(ConfigReader& r, Architecture& a) {
  read_mha_core(r, a, {6144, 44, 64, 24576, 50432, 2048, "gelu"});  // GPTNeoXConfig's defaults
  const bool bias = r.boolean_or("attention_bias", true);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  a.norm.placement = r.boolean_or("use_parallel_residual", true) ? NormPlacement::kParallel : NormPlacement::kPre;
  parallel_common(r, a);  // dense_h_to_4h / dense_4h_to_h always carry a bias
  const bool rope_partial = rope_gives_partial(r);
  // 4.x keys: rotary_emb_base and rotary_pct (5.x: rope_parameters).
  const auto base = number_if(r, "rotary_emb_base");
  RopeRead rope = read_rope(r, base.value_or(10000.0));
  if (base && *base != rope.theta)
    r.fail("rotary_emb_base", fmt::format("found {}, expected the same value as rope_theta ({})",
                                          yaml_float_text(*base), yaml_float_text(rope.theta)));
  if (const auto pct = number_if(r, "rotary_pct")) {
    merge_partial(r, rope, "rotary_pct", *pct, rope_partial);
  } else if (!rope_partial) {
    rope.partial_rotary_factor = 0.25;  // GPTNeoXConfig's rotary_pct
    r.note_default("rotary_pct", "0.25");
  }
  apply_rope(r, a, rope, std::nullopt, true);  // neox rotation of the first rotary_ndims
  r.ignore({"is_decoder"});
}

void fill_phi(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a,
                    {.max_position_embeddings = 2048,
                     .rms_norm_eps = 1e-5,
                     .vocab_size = 51200,
                     .hidden_act = "gelu_new",
                     .norm_eps_key = "layer_norm_eps"});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  a.attention.qkv_bias = true;  // PhiAttention: q/k/v_proj and dense all biased
  a.attention.out_bias = true;
  a.attention.qk_norm = r.boolean_or("qk_layernorm", false);  // one LayerNorm (with bias) for every head
  a.norm.placement = NormPlacement::kParallelShared;  // PhiDecoderLayer: one input_layernorm
  parallel_common(r, a);
  a.head.bias = true;  // PhiForCausalLM: lm_head has a bias
  partial_rope(r, a, 0.5);  // PhiConfig's partial_rotary_factor
  r.ignore({"is_decoder"});
}

// Persimmon (Adept): a pre-LayerNorm decoder with GPT-NeoX's fused query_key_value
// (interleaved per head), a squared-ReLU MLP with biases, one LayerNorm (with bias) for
// every head of q and of k (qk_layernorm), and rope on half of each head.
void fill_persimmon(ConfigReader& r, Architecture& a) {
  read_mha_core(r, a, {4096, 36, 64, 16384, 262144, 16384, "relu2"});  // PersimmonConfig's defaults
  a.attention.qkv_bias = true;  // query_key_value and dense are biased
  a.attention.out_bias = true;
  a.attention.qk_norm = r.boolean_or("qk_layernorm", true);
  a.norm.placement = NormPlacement::kPre;
  parallel_common(r, a);             // LayerNorm, an ungated MLP with biases, causal, the LM head
  partial_rope(r, a, 0.5, 25000.0);  // PersimmonConfig's partial_rotary_factor and rope_theta
}

void fill_gptj(ConfigReader& r, Architecture& a) {
  a.hidden_size = r.integer_or("n_embd", 4096, limits::kHiddenSize);
  a.num_hidden_layers = r.integer_or("n_layer", 28, limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer_or("n_head", 16, limits::kHeads);
  if (a.hidden_size % a.num_attention_heads != 0)
    r.fail("n_head", fmt::format("found {}, expected a divisor of n_embd ({})", a.num_attention_heads, a.hidden_size));
  a.num_key_value_heads = a.num_attention_heads;
  a.head_dim = a.hidden_size / a.num_attention_heads;
  a.vocab_size = r.integer_or("vocab_size", 50400, limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("n_positions", 2048, limits::kMaxPositionEmbeddings);
  read_inner_or_4x(r, a, "n_inner", "n_embd");
  a.mlp.activation =
      activation_from(r, "activation_function", r.string_or("activation_function", "gelu_new"));
  a.norm.eps = r.number_or("layer_norm_epsilon", 1e-5, limits::kNormEps);
  a.embedding.tied = r.boolean_or("tie_word_embeddings", false);
  a.attention.qkv_bias = false;  // GPTJAttention: q/k/v/out_proj without bias
  a.attention.out_bias = false;
  a.norm.placement = NormPlacement::kParallelShared;  // GPTJBlock: ln_1 feeds attention and MLP
  parallel_common(r, a);
  a.head.bias = true;  // GPTJForCausalLM: lm_head has a bias
  const bool rope_partial = rope_gives_partial(r);
  RopeRead rope = read_rope(r, 10000.0);
  if (const auto dim = r.optional_integer("rotary_dim", limits::kHeads)) {
    if (*dim > a.head_dim || *dim % 2 != 0)
      r.fail("rotary_dim", fmt::format("found {}, expected an even number <= the head size ({})", *dim, a.head_dim));
    merge_partial(r, rope, "rotary_dim", static_cast<double>(*dim) / static_cast<double>(a.head_dim), rope_partial);
  } else if (!r.has("rotary_dim") && !rope_partial) {
    rope.partial_rotary_factor = 64.0 / static_cast<double>(a.head_dim);  // GPTJConfig's rotary_dim 64
    r.note_default("rotary_dim", "64");
  }
  apply_rope(r, a, rope, std::nullopt, true);
  a.position.rope_style = RopeStyle::kGptj;  // rotate_every_two: interleaved pairs
  r.ignore({"is_decoder"});
}

// StableLM (StableLmForCausalLM): LayerNorm with bias, a gated SiLU MLP without bias,
// rope on the first partial_rotary_factor (default 0.25) of each head, q/k/v bias from
// use_qkv_bias; use_parallel_residual makes the one input_layernorm feed attention and
// MLP side by side (StableLmDecoderLayer then has no post_attention_layernorm);
// qk_layernorm normalises each q and k head with its own bias-free LayerNorm.
void fill_stablelm(ConfigReader& r, Architecture& a) {
  read_decoder_core(
      r, a,
      {.max_position_embeddings = 4096, .rms_norm_eps = 1e-5, .vocab_size = 50304, .norm_eps_key = "layer_norm_eps"});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  a.norm.kind = NormKind::kLayerNorm;
  a.norm.placement =
      r.boolean_or("use_parallel_residual", false) ? NormPlacement::kParallelShared : NormPlacement::kPre;
  a.attention.qkv_bias = r.boolean_or("use_qkv_bias", false);
  a.attention.out_bias = false;
  // qk_layernorm: a LayerNorm without bias of each q and k head, each head its own
  // weight (StableLmLayerNormPerHead, one nn.LayerNorm a head).
  if (r.boolean_or("qk_layernorm", false)) {
    a.attention.qk_norm = a.attention.qk_norm_per_head = true;
    a.attention.qk_norm_bias = false;
  }
  set_layer_pattern(r, a, std::vector<LayerType>(static_cast<size_t>(a.num_hidden_layers), LayerType::kFull),
                    std::nullopt, "sliding_window");
  partial_rope(r, a, 0.25);  // StableLmConfig's partial_rotary_factor
  r.ignore({"is_decoder"});
}

namespace {

// Cohere's and Cohere 2's layer: one LayerNorm without a bias feeding attention and a
// gated MLP, attention_bias on all four projections.
void cohere_layer(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a,
                    {.max_position_embeddings = 8192,
                     .rms_norm_eps = 1e-5,
                     .tie_word_embeddings = true,
                     .vocab_size = 256000,
                     .norm_eps_key = "layer_norm_eps"});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  a.norm.kind = NormKind::kLayerNorm;  // CohereLayerNorm: (x - mean) / std * w, no bias
  a.norm.bias = false;
  a.norm.placement = NormPlacement::kParallelShared;  // x + attn(ln(x)) + mlp(ln(x))
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
}

// Then, once the layer pattern is set: GPT-J-style rope of `default_theta` unless given,
// logits x logit_scale.
void cohere_rope_and_head(ConfigReader& r, Architecture& a, double default_theta) {
  apply_rope(r, a, read_rope(r, default_theta), std::nullopt, false);
  a.position.rope_style = RopeStyle::kGptj;  // repeat_interleave'd frequencies: interleaved pairs
  const Json* scale = r.get("logit_scale");
  if (scale != nullptr && scale->is_null())
    r.fail_value("logit_scale", *scale, "a number (the model multiplies the logits by it)");
  a.head.logit_scale = r.number_or("logit_scale", 0.0625, limits::kLogitScale);
  r.ignore({"is_decoder"});
}

}  // namespace

void fill_cohere(ConfigReader& r, Architecture& a) {
  cohere_layer(r, a);
  // Command R+: a LayerNorm (no bias) of each q and k head, each head its own weights
  // (CohereLayerNorm of [heads, head_dim]).
  a.attention.qk_norm = a.attention.qk_norm_per_head = r.boolean_or("use_qk_norm", false);
  set_layer_pattern(r, a, std::vector<LayerType>(static_cast<size_t>(a.num_hidden_layers), LayerType::kFull),
                    std::nullopt, "sliding_window");
  // CohereConfig's rope theta default: 500000 in transformers 5 (default_theta), 10000
  // in 4.x (rope_theta); a config with neither key is read as its version says.
  const Json* version = r.get("transformers_version");
  const bool v4 = version != nullptr && version->is_string() && version->get<std::string>().rfind("4.", 0) == 0;
  cohere_rope_and_head(r, a, v4 ? 10000.0 : 500000.0);
}

// Cohere 2 (Command R7B, Command A): Cohere's layer with sliding layers (layer_types, or
// the legacy sliding_window_pattern P: layer i slides unless (i + 1) % P == 0) and rope
// on the sliding layers only: the full-attention layers are NoPE. Rope theta defaults to
// 10000 (Cohere2Config has no default_theta of its own).
void fill_cohere2(ConfigReader& r, Architecture& a) {
  cohere_layer(r, a);
  auto types = read_layer_types(r, a.num_hidden_layers);
  if (types) {
    r.ignore({"sliding_window_pattern"});  // the legacy key is read only without layer_types
  } else {
    const int64_t p = r.integer_or("sliding_window_pattern", 4, 1);
    types = std::vector<LayerType>();
    for (int64_t i = 0; i < a.num_hidden_layers; ++i)
      types->push_back((i + 1) % p != 0 ? LayerType::kSliding : LayerType::kFull);
  }
  const Json* w = r.get("sliding_window");
  if (w == nullptr) r.note_default("sliding_window", "4096");
  const std::optional<int64_t> window =
      w == nullptr ? std::optional<int64_t>(4096) : r.optional_integer("sliding_window");
  set_layer_pattern(r, a, *types, window, "sliding_window");
  std::vector<bool> rope;
  for (LayerType t : *types) rope.push_back(t == LayerType::kSliding);
  if (std::find(rope.begin(), rope.end(), true) == rope.end())
    r.fail("layer_types",
           "has no sliding layer, and Cohere 2 rotates only its sliding layers: no layer would have rope");
  set_rope_layers(a, rope);
  r.ignore({"use_qk_norm"});  // a CohereConfig key Cohere2Attention never reads
  cohere_rope_and_head(r, a, 10000.0);
}

}  // namespace fk::spec::hf

namespace fk::spec::hf {

// Falcon (FalconForCausalLM): LayerNorm with bias, rope over the whole head, an ungated
// MLP of ffn_hidden_size, biases on every projection by `bias`, a tied head by default.
// The layer: sequential pre-norm (parallel_attn false), or attention and MLP reading the
// layer input through one input_layernorm (Falcon-7B) or two, ln_attn and ln_mlp
// (new_decoder_architecture: Falcon-40B/180B, num_ln_in_parallel_attn 2 by default).
// kv heads: num_kv_heads under the new architecture, one under multi_query, else all.
void fill_falcon(ConfigReader& r, Architecture& a) {
  // n_embed is FalconConfig's own alias of hidden_size; the other RefinedWeb keys are not.
  const char* hidden_key = r.has_value("n_embed") && !r.has_value("hidden_size") ? "n_embed" : "hidden_size";
  a.hidden_size = r.integer_or(hidden_key, 4544, limits::kHiddenSize);
  if (hidden_key == std::string("hidden_size")) r.ignore({"n_embed"});
  for (const char* legacy : {"n_head", "n_layer", "n_head_kv"})
    if (r.has(legacy))
      r.fail(legacy,
             "is a RefinedWeb key FalconConfig does not read (convert the config with transformers' "
             "convert_custom_code_checkpoint.py, which renames it)");
  a.num_hidden_layers = r.integer_or("num_hidden_layers", 32, limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer_or("num_attention_heads", 71, limits::kHeads);
  if (a.hidden_size % a.num_attention_heads != 0)
    r.fail("num_attention_heads",
           fmt::format("found {}, expected a divisor of hidden_size ({})", a.num_attention_heads, a.hidden_size));
  a.head_dim = a.hidden_size / a.num_attention_heads;
  a.vocab_size = r.integer_or("vocab_size", 65024, limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("max_position_embeddings", 2048, limits::kMaxPositionEmbeddings);
  read_inner_or_4x(r, a, "ffn_hidden_size", "hidden_size");
  a.mlp.activation = activation_from(r, "activation", r.string_or("activation", "gelu"));
  a.norm.eps = r.number_or("layer_norm_epsilon", 1e-5, limits::kNormEps);
  a.embedding.tied = r.boolean_or("tie_word_embeddings", true);
  if (r.boolean_or("alibi", false)) r.fail("alibi", "found true, expected false (ALiBi positions are not supported)");
  const bool bias = r.boolean_or("bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;

  const bool new_arch = r.boolean_or("new_decoder_architecture", false);
  const bool multi_query = r.boolean_or("multi_query", true);
  const bool parallel = r.boolean_or("parallel_attn", true);
  const std::optional<int64_t> kv = r.optional_integer("num_kv_heads", limits::kHeads);
  const std::optional<int64_t> norms = r.optional_integer("num_ln_in_parallel_attn", 1);
  if (norms && *norms > 2) r.fail("num_ln_in_parallel_attn", fmt::format("found {}, expected 1 or 2", *norms));
  if (new_arch) {
    if (!parallel)
      r.fail("parallel_attn",
             "found false, expected true (FalconDecoderLayer has no sequential form of "
             "new_decoder_architecture)");
    a.num_key_value_heads = kv.value_or(a.num_attention_heads);
    a.norm.placement = norms.value_or(2) == 2 ? NormPlacement::kParallel : NormPlacement::kParallelShared;
  } else {
    a.num_key_value_heads = multi_query ? 1 : kv.value_or(a.num_attention_heads);
    if (!multi_query && a.num_key_value_heads != a.num_attention_heads)
      r.fail("num_kv_heads", fmt::format("found {}, expected num_attention_heads ({}): without multi_query or "
                                         "new_decoder_architecture every head has its own k and v",
                                         a.num_key_value_heads, a.num_attention_heads));
    if (parallel && norms.value_or(1) == 2)
      r.fail("num_ln_in_parallel_attn",
             "found 2, expected 1 or null (two parallel norms need "
             "new_decoder_architecture)");
    a.norm.placement = parallel ? NormPlacement::kParallelShared : NormPlacement::kPre;
  }
  check_heads(r, a, "num_attention_heads", "num_kv_heads");
  parallel_common(r, a);  // LayerNorm, an ungated MLP, ln_f, full attention everywhere
  a.mlp.bias = bias;
  // apply_residual_connection_post_layernorm is carried by old configs and read by nothing.
  r.ignore({"is_decoder", "apply_residual_connection_post_layernorm", "hidden_dropout", "attention_dropout"});
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

}  // namespace fk::spec::hf
