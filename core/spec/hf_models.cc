// The registry of supported model types, and the Llama-style decoders: llama,
// mistral, mixtral, qwen2, qwen3, qwen3_moe, phi3 (pre-RMSNorm, gated SiLU MLP, neox
// rope). Defaults are those of the transformers config classes (4.x and 5.x agree on
// every one used here).
#include "core/spec/hf_models.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace fk::spec::hf {

const std::vector<ModelImporter>& model_importers() {
  static const std::vector<ModelImporter> kImporters = {
      {"arcee", "ArceeConfig", "arcee", fill_arcee},
      {"bamba", "BambaConfig", "bamba", fill_bamba},
      {"granitemoehybrid", "GraniteMoeHybridConfig", "granite", fill_granitemoehybrid},
      {"bert", "BertConfig", "bert", fill_bert},
      {"biogpt", "BioGptConfig", "biogpt", fill_biogpt},
      {"camembert", "CamembertConfig", "bert", fill_roberta},
      {"cohere", "CohereConfig", "cohere", fill_cohere},
      {"cohere2", "Cohere2Config", "cohere", fill_cohere2},
      {"deepseek_v2", "DeepseekV2Config", "deepseek", fill_deepseek_v2},
      {"deepseek_v3", "DeepseekV3Config", "deepseek", fill_deepseek_v3},
      {"distilbert", "DistilBertConfig", "bert", fill_distilbert},
      {"electra", "ElectraConfig", "bert", fill_electra},
      {"falcon", "FalconConfig", "falcon", fill_falcon},
      {"gemma", "GemmaConfig", "gemma", fill_gemma},
      {"gemma2", "Gemma2Config", "gemma2", fill_gemma2},
      {"gemma3_text", "Gemma3TextConfig", "gemma3", fill_gemma3_text},
      {"gpt2", "GPT2Config", "gpt2", fill_gpt2},
      {"gpt_bigcode", "GPTBigCodeConfig", "gpt-bigcode", fill_gpt_bigcode},
      {"gpt_neo", "GPTNeoConfig", "gpt-neo", fill_gpt_neo},
      {"gpt_neox", "GPTNeoXConfig", "gpt-neox", fill_gpt_neox},
      {"gptj", "GPTJConfig", "gpt-j", fill_gptj},
      {"glm", "GlmConfig", "glm", fill_glm},
      {"glm4", "Glm4Config", "glm", fill_glm4},
      {"granite", "GraniteConfig", "granite", fill_granite},
      {"granitemoe", "GraniteMoeConfig", "granite", fill_granitemoe},
      {"granitemoeshared", "GraniteMoeSharedConfig", "granite", fill_granitemoeshared},
      {"helium", "HeliumConfig", "helium", fill_helium},
      {"jamba", "JambaConfig", "jamba", fill_jamba},
      {"llama", "LlamaConfig", "llama", fill_llama},
      {"gpt_oss", "GptOssConfig", "gpt-oss", fill_gpt_oss},
      {"mamba", "MambaConfig", "mamba", fill_mamba},
      {"mamba2", "Mamba2Config", "mamba2", fill_mamba2},
      {"mistral", "MistralConfig", "mistral", fill_mistral},
      {"mixtral", "MixtralConfig", "mistral", fill_mixtral},
      {"modernbert", "ModernBertConfig", "modernbert", fill_modernbert},
      {"nemotron", "NemotronConfig", "nemotron", fill_nemotron},
      {"olmo", "OlmoConfig", "olmo", fill_olmo},
      {"olmo2", "Olmo2Config", "olmo", fill_olmo2},
      {"olmoe", "OlmoeConfig", "olmo", fill_olmoe},
      {"opt", "OPTConfig", "opt", fill_opt},
      {"phi", "PhiConfig", "phi", fill_phi},
      {"persimmon", "PersimmonConfig", "persimmon", fill_persimmon},
      {"phi3", "Phi3Config", "phi3", fill_phi3},
      {"qwen2", "Qwen2Config", "qwen2", fill_qwen2},
      {"qwen3", "Qwen3Config", "qwen3", fill_qwen3},
      {"qwen2_moe", "Qwen2MoeConfig", "qwen2", fill_qwen2_moe},
      {"qwen3_moe", "Qwen3MoeConfig", "qwen3", fill_qwen3_moe},
      {"roberta", "RobertaConfig", "bert", fill_roberta},
      {"seed_oss", "SeedOssConfig", "seed-oss", fill_seed_oss},
      {"smollm3", "SmolLM3Config", "smollm", fill_smollm3},
      {"stablelm", "StableLmConfig", "stablelm", fill_stablelm},
      {"starcoder2", "Starcoder2Config", "starcoder2", fill_starcoder2},
      {"xlm-roberta", "XLMRobertaConfig", "bert", fill_roberta},
      {"vit", "ViTConfig", "vit", fill_vit},
      {"dinov2", "Dinov2Config", "dinov2", fill_dinov2},
      {"siglip_vision_model", "SiglipVisionConfig", "siglip", fill_siglip_vision},
      {"convnext", "ConvNextConfig", "convnext", fill_convnext},
      {"convnextv2", "ConvNextV2Config", "convnext", fill_convnextv2},
  };
  return kImporters;
}

const char* unsupported_reason(const std::string& model_type) {
  static const std::vector<std::pair<std::vector<const char*>, const char*>> kReasons = {
      {{"kimi_k2"}, "Kimi K2's config is DeepSeek-V3's: import it with \"model_type\": \"deepseek_v3\""},
      {{"zamba", "zamba2", "falcon_h1", "nemotron_h", "lfm2"},
       "hybrid stacks (attention and state-space or convolution blocks in one model) other than Jamba's, "
       "Bamba's and GraniteMoeHybrid's are not supported (jamba, bamba and granitemoehybrid import)"},
      {{"qwen3_next"}, "the gated delta net mixer and hybrid layers are not supported"},
      {{"bloom", "mpt"}, "ALiBi positions are not supported"},
      {{"t5", "mt5", "umt5", "bart", "mbart", "marian", "pegasus", "whisper", "m2m_100", "nllb_moe"},
       "encoder-decoder models (cross-attention) are not supported"},
      {{"modernbert"},
       "ModernBERT's bidirectional local-window layers and its layer-0 identity norm are not supported"},
      {{"siglip"}, "SigLIP's dual encoder: import its vision_config (\"model_type\": \"siglip_vision_model\")"},
      {{"clip", "clip_vision_model", "deit", "beit", "dinov2_with_registers"},
       "vision encoders other than ViT's, DINOv2's and SigLIP's vision tower are not supported (CLIP's pre-layernorm, "
       "DeiT's distillation token, BEiT's relative positions, register tokens) (vit, dinov2 and siglip_vision_model "
       "import)"},
      {{"convnext", "convnextv2", "resnet", "efficientnet"}, "convolutional networks are not supported"},
      {{"llama4", "llama4_text"}, "Llama 4's chunked attention, layers without rope and MoE are not supported"},
      {{"fuyu"}, "image patches as inputs are not supported (its text model, persimmon, imports)"},
      {{"phimoe"}, "PhiMoE's sparsemixer routing is not supported"},
      {{"dbrx"}, "DBRX's clip_qkv and fused expert tensors are not supported"},
      {{"codegen"}, "CodeGen's qkv_proj interleaved over mp_num blocks is not supported"},
      {{"xglm"}, "sinusoidal positions are not supported"},
      {{"deberta", "deberta-v2"}, "disentangled relative-position attention is not supported"},
      {{"llava", "llava_next", "qwen2_vl", "qwen2_5_vl", "mistral3", "idefics3", "paligemma"},
       "multimodal wrappers other than gemma3 are not supported (import the text model's config)"},
  };
  for (const auto& [types, reason] : kReasons)
    for (const char* t : types)
      if (model_type == t) return reason;
  return nullptr;
}

const ModelImporter* find_importer(const std::string& model_type) {
  for (const auto& m : model_importers())
    if (model_type == m.model_type) return &m;
  return nullptr;
}

std::vector<LayerType> uniform(int64_t layers, LayerType t) {
  return std::vector<LayerType>(static_cast<size_t>(layers), t);
}

std::optional<int64_t> read_window(ConfigReader& r, std::optional<int64_t> def) {
  const Json* v = r.get("sliding_window");
  if (v == nullptr) {
    r.note_default("sliding_window", def ? std::to_string(*def) : "null");
    return def;
  }
  return r.optional_integer("sliding_window");
}

std::vector<LayerType> even_layers_slide(int64_t layers) {
  std::vector<LayerType> types;
  for (int64_t l = 0; l < layers; ++l) types.push_back(l % 2 == 0 ? LayerType::kSliding : LayerType::kFull);
  return types;
}

void read_granite_scales(ConfigReader& r, Architecture& a) {
  a.attention.scale = r.number_or("attention_multiplier", 1.0, limits::kAttentionScale);
  if (const double m = r.number_or("embedding_multiplier", 1.0, limits::kMultiplier); m != 1.0)
    a.embedding.multiplier = m;
  if (const double m = r.number_or("residual_multiplier", 1.0, limits::kMultiplier); m != 1.0)
    a.norm.residual_multiplier = m;
  if (const double d = r.number_or("logits_scaling", 1.0, limits::kLogitScale); d != 1.0) a.head.logit_scale = 1.0 / d;
}

namespace {

// Mistral, Mixtral, Phi-3: one window for every layer (or none); 5.x may list the
// layer types explicitly.
void every_layer_window(ConfigReader& r, Architecture& a, std::optional<int64_t> def) {
  const auto window = read_window(r, def);
  const auto types = read_layer_types(r, a.num_hidden_layers);
  set_layer_pattern(r, a,
                    types ? *types : uniform(a.num_hidden_layers, window ? LayerType::kSliding : LayerType::kFull),
                    window, "sliding_window");
}

// Qwen2 / Qwen3: use_sliding_window gates the window; without 5.x layer_types, the
// layers from max_window_layers on slide (Qwen2Config's rule).
void qwen_window(ConfigReader& r, Architecture& a) {
  const bool use = r.boolean_or("use_sliding_window", false);
  const auto window = read_window(r, 4096);
  const int64_t max_window_layers = r.integer_or("max_window_layers", 28, 0);
  const auto effective = use ? window : std::nullopt;
  auto types = read_layer_types(r, a.num_hidden_layers);
  if (!types) {
    types = uniform(a.num_hidden_layers, LayerType::kFull);
    if (effective)
      for (int64_t l = max_window_layers; l < a.num_hidden_layers; ++l)
        (*types)[static_cast<size_t>(l)] = LayerType::kSliding;
  }
  if (!use && std::find(types->begin(), types->end(), LayerType::kSliding) != types->end())
    r.fail("use_sliding_window", "found false, expected true (layer_types lists sliding_attention layers)");
  set_layer_pattern(r, a, *types, effective, "sliding_window");
}

void attention_bias_all(ConfigReader& r, Architecture& a) {
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
}

void no_bias_keys(ConfigReader& r) {
  r.require_inert("attention_bias", fmt::format("{} projections have no bias", r.cls()));
  r.require_inert("mlp_bias", fmt::format("{} MLPs have no bias", r.cls()));
}

}  // namespace

void fill_llama(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 2048, .rms_norm_eps = 1e-6});
  attention_bias_all(r, a);
  a.mlp.bias = r.boolean_or("mlp_bias", false);
  r.ignore({"pretraining_tp", "is_decoder"});  // pretraining_tp splits matmuls: same math
  set_layer_pattern(r, a, uniform(a.num_hidden_layers, LayerType::kFull), std::nullopt, "sliding_window");
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

// Granite (GraniteForCausalLM): Llama with muP multipliers. The embeddings are
// multiplied by embedding_multiplier, the softmax scale is attention_multiplier itself
// (default 1.0, not 1/sqrt(head_dim)), each residual branch's output by
// residual_multiplier before it joins the stream, and the logits are divided by
// logits_scaling.
void fill_granite(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 2048, .rms_norm_eps = 1e-6});
  attention_bias_all(r, a);
  a.mlp.bias = r.boolean_or("mlp_bias", false);
  r.ignore({"is_decoder", "pretraining_tp"});
  set_layer_pattern(r, a, uniform(a.num_hidden_layers, LayerType::kFull), std::nullopt, "sliding_window");
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
  read_granite_scales(r, a);
}

// OLMo 2 (Olmo2ForCausalLM): Llama's layers with the norms moved onto the branch
// outputs (x + norm(attn(x)), x + norm(mlp(x)); no input norm) and q / k each
// normalised over all of a token's heads by one RMSNorm before rope.
void fill_olmo2(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 2048, .rms_norm_eps = 1e-5, .vocab_size = 50304});
  attention_bias_all(r, a);
  r.ignore({"is_decoder", "pretraining_tp"});
  if (const Json* clip = r.get("clip_qkv"); clip != nullptr && !clip->is_null())
    r.fail_value("clip_qkv", *clip, "null (clamping q, k and v is not supported)");
  a.norm.placement = NormPlacement::kPostBranch;
  a.attention.qk_norm = true;
  a.attention.qk_norm_full = true;  // Olmo2Attention: q_norm over num_heads x head_dim
  set_layer_pattern(r, a, uniform(a.num_hidden_layers, LayerType::kFull), std::nullopt, "sliding_window");
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

void fill_mistral(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 4096 * 32, .rms_norm_eps = 1e-6, .num_key_value_heads = 8});
  no_bias_keys(r);
  r.ignore({"is_decoder"});
  every_layer_window(r, a, 4096);
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

void fill_mixtral(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 4096 * 32, .rms_norm_eps = 1e-5, .num_key_value_heads = 8});
  no_bias_keys(r);
  r.ignore({"is_decoder", "router_jitter_noise"});  // jitter is applied in training only
  every_layer_window(r, a, std::nullopt);
  apply_rope(r, a, read_rope(r, 1e6), std::nullopt, false);
  a.moe.num_experts = r.integer("num_local_experts", 2);
  a.moe.experts_per_token = r.integer("num_experts_per_tok");
  a.moe.moe_intermediate_size = a.intermediate_size;  // MixtralConfig.intermediate_size is per expert
  a.moe.renormalize = true;                           // Mixtral softmaxes the top-k logits
}

void fill_qwen2(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 32768, .rms_norm_eps = 1e-6, .num_key_value_heads = 32});
  a.attention.qkv_bias = true;  // Qwen2Attention: bias on q/k/v, none on o
  a.attention.out_bias = false;
  r.ignore({"is_decoder"});
  qwen_window(r, a);
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

void fill_qwen3(ConfigReader& r, Architecture& a) {
  read_decoder_core(
      r, a, {.max_position_embeddings = 32768, .rms_norm_eps = 1e-6, .num_key_value_heads = 32, .head_dim = 128});
  attention_bias_all(r, a);
  a.attention.qk_norm = true;  // Qwen3Attention q_norm / k_norm
  r.ignore({"is_decoder"});
  qwen_window(r, a);
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

namespace {

// The sparse layers of Qwen2-MoE and Qwen3-MoE: num_experts (4.x) / num_local_experts
// (5.x), num_experts_per_tok, moe_intermediate_size, norm_topk_prob, and which layers
// are dense (mlp_only_layers, decoder_sparse_step). Absent keys take the config
// class's defaults (`d`), as transformers does.
struct QwenMoeDefaults {
  int64_t num_experts, experts_per_token, moe_intermediate_size;
};

void read_qwen_moe(ConfigReader& r, Architecture& a, const QwenMoeDefaults& d) {
  // 4.x writes num_experts; 5.x maps it to num_local_experts.
  const bool old_key = r.has_value("num_experts"), new_key = r.has_value("num_local_experts");
  if (old_key && new_key && r.integer("num_experts", 2) != r.integer("num_local_experts", 2))
    r.fail("num_local_experts", fmt::format("found {}, expected the same as num_experts ({})",
                                            r.integer("num_local_experts", 2), r.integer("num_experts", 2)));
  a.moe.num_experts = new_key ? r.integer("num_local_experts", 2) : r.integer_or("num_experts", d.num_experts, 2);
  r.ignore({"num_experts", "num_local_experts"});
  a.moe.experts_per_token = r.integer_or("num_experts_per_tok", d.experts_per_token, limits::kExpertsPerToken);
  a.moe.moe_intermediate_size =
      r.integer_or("moe_intermediate_size", d.moe_intermediate_size, limits::kMoeIntermediateSize);
  a.moe.renormalize = r.boolean_or("norm_topk_prob", false);
  // Qwen3MoeDecoderLayer: sparse when not in mlp_only_layers and (layer + 1) % step == 0.
  const int64_t step = r.integer_or("decoder_sparse_step", 1, 1);
  std::set<int64_t> dense;
  const Json* only = r.get("mlp_only_layers");
  if (only == nullptr) r.note_default("mlp_only_layers", "[]");
  if (only != nullptr && !only->is_null()) {
    if (!only->is_array()) r.fail_value("mlp_only_layers", *only, "a list of layer indices");
    for (size_t i = 0; i < only->size(); ++i) {
      const Json& l = (*only)[i];
      if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= a.num_hidden_layers)
        r.fail_value(fmt::format("mlp_only_layers[{}]", i), l,
                     fmt::format("a layer index in [0, {}) (num_hidden_layers)", a.num_hidden_layers));
      dense.insert(l.get<int64_t>());
    }
  }
  for (int64_t l = 0; l < a.num_hidden_layers; ++l)
    if ((l + 1) % step != 0) dense.insert(l);
  a.moe.dense_layers.assign(dense.begin(), dense.end());
  a.moe.first_dense_layers = 0;
  if (static_cast<int64_t>(dense.size()) == a.num_hidden_layers)
    r.fail(r.has("mlp_only_layers") ? "mlp_only_layers" : "decoder_sparse_step",
           "leaves no MoE layer, expected at least one sparse layer (import a dense model type instead)");
}

}  // namespace

void fill_qwen3_moe(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 32768, .rms_norm_eps = 1e-6, .num_key_value_heads = 4});
  attention_bias_all(r, a);
  a.attention.qk_norm = true;
  r.ignore({"is_decoder"});
  if (r.boolean_or("use_sliding_window", false))
    r.fail("use_sliding_window",
           "found true, expected false (which Qwen3-MoE layers slide is not recorded in the "
           "config, so the import would guess)");
  r.ignore({"sliding_window", "max_window_layers"});  // unused while use_sliding_window is false
  set_layer_pattern(r, a, uniform(a.num_hidden_layers, LayerType::kFull), std::nullopt, "sliding_window");
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);

  read_qwen_moe(r, a, {.num_experts = 128, .experts_per_token = 8, .moe_intermediate_size = 768});
}

// Qwen2-MoE: Qwen2's attention (q/k/v bias: qkv_bias) over Qwen's sparse MoE layers, with
// one shared expert of shared_expert_intermediate_size whose output is gated per token
// by sigmoid(shared_expert_gate(x)).
void fill_qwen2_moe(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 32768, .rms_norm_eps = 1e-6, .num_key_value_heads = 16});
  a.attention.qkv_bias = r.boolean_or("qkv_bias", true);
  a.attention.out_bias = false;
  r.ignore({"is_decoder"});
  if (r.boolean_or("use_sliding_window", false))
    r.fail("use_sliding_window", "found true, expected false (sliding Qwen2-MoE layers are not supported)");
  r.ignore({"sliding_window", "max_window_layers"});  // unused while use_sliding_window is false
  const auto types = read_layer_types(r, a.num_hidden_layers);
  if (types && std::find(types->begin(), types->end(), LayerType::kSliding) != types->end())
    r.fail("layer_types", "lists sliding_attention layers, expected full_attention only (use_sliding_window is false)");
  set_layer_pattern(r, a, uniform(a.num_hidden_layers, LayerType::kFull), std::nullopt, "sliding_window");
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
  read_qwen_moe(r, a, {.num_experts = 60, .experts_per_token = 4, .moe_intermediate_size = 1408});
  a.moe.shared_experts = 1;
  a.moe.shared_intermediate_size =
      r.integer_or("shared_expert_intermediate_size", 5632, limits::kSharedIntermediateSize);
  a.moe.shared_expert_gate = true;  // Qwen2MoeSparseMoeBlock: sigmoid(shared_expert_gate(x)) * shared_expert(x)
}

// gpt-oss (GptOssConfig): pre-RMSNorm layers of biased GQA attention with a learned sink
// per head (attention.sinks), alternating sliding and full layers (without layer_types,
// layer i slides when i is even), YaRN rope (default factor 32 over 4096 positions, not
// truncated), and MoE in every layer: a biased router whose top-k logits are softmaxed,
// experts of intermediate_size with biases and the clamped SwiGLU (swiglu_limit,
// swiglu_alpha; GptOssExperts' alpha 1.702 where the config has no key).
void fill_gpt_oss(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a,
                    {.max_position_embeddings = 131072,
                     .rms_norm_eps = 1e-5,
                     .num_key_value_heads = 8,
                     .head_dim = 64,
                     .vocab_size = 201088});
  if (a.mlp.activation != Activation::kSilu)
    r.fail("hidden_act", "expected silu (the experts' SwiGLU; the clamp and its alpha are swiglu_limit, swiglu_alpha)");
  const bool bias = r.boolean_or("attention_bias", true);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  a.attention.sinks = true;                                    // GptOssAttention.sinks: one learned logit per head
  r.ignore({"router_aux_loss_coef", "output_router_logits"});  // training only
  const std::optional<int64_t> window = read_window(r, 128);
  // GptOssConfig's layer_types default: sliding when (i + 1) % 2 is 1.
  const auto types = read_layer_types(r, a.num_hidden_layers).value_or(even_layers_slide(a.num_hidden_layers));
  set_layer_pattern(r, a, types, window, "sliding_window");
  RopeRead rope = read_rope(r, 150000.0);
  if (!r.has_value("rope_parameters") && !r.has_value("rope_scaling")) {
    // GptOssConfig's default rope_parameters.
    rope.scaling.type = RopeScalingType::kYarn;
    rope.scaling.factor = 32.0;
    rope.scaling.beta_fast = 32.0;
    rope.scaling.beta_slow = 1.0;
    rope.scaling.truncate = false;
    rope.scaling.original_max_position_embeddings = 4096;
    r.note_default("rope_parameters", "yarn, factor 32, beta_fast 32, beta_slow 1, truncate false, original 4096");
  }
  apply_rope(r, a, rope, std::nullopt, false);
  a.moe.num_experts = r.integer_or("num_local_experts", 128, 2);
  a.moe.experts_per_token = r.integer_or("num_experts_per_tok", 4);
  a.moe.moe_intermediate_size = a.intermediate_size;  // GptOssExperts: intermediate_size per expert
  a.moe.renormalize = true;                           // softmax over the top-k logits
  a.moe.router_bias = true;
  a.moe.expert_bias = true;
  a.moe.swiglu_limit = r.number_or("swiglu_limit", 7.0, limits::kSwigluLimit);
  a.moe.swiglu_alpha = r.number_or("swiglu_alpha", 1.702, limits::kSwigluAlpha);
}

void fill_phi3(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 4096, .rms_norm_eps = 1e-5});
  no_bias_keys(r);
  // Read only by longrope scaling, which the import rejects.
  r.ignore({"is_decoder", "original_max_position_embeddings"});
  every_layer_window(r, a, std::nullopt);
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, true);  // Phi3 rotates the first rotary dims
}

}  // namespace fk::spec::hf
