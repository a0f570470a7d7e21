// BERT (BertModel: bidirectional encoder, post-LayerNorm, learned absolute
// positions, token types, no LM head) and its relatives (RoBERTa, XLM-RoBERTa,
// CamemBERT, ELECTRA, DistilBERT), GPT-2 (pre-LayerNorm decoder with learned
// positions, Conv1D projections with bias, tied LM head) and OPT (the same shape of
// decoder with Linear projections, ReLU, and positions offset by 2): multi-head
// attention with biases everywhere and an ungated MLP. StarCoder2 is their GQA, rope
// successor: pre-LayerNorm, biases (use_bias), an ungated MLP, a sliding window.
// GPT-BigCode (SantaCoder, StarCoder 1) is GPT-2 with Linear projections and, by
// default, multi-query attention; GPT-Neo is too, with unscaled scores and local layers;
// BioGPT is OPT's decoder with scaled embeddings. ViT, DINOv2 and SigLIP's vision tower
// are pre-LayerNorm bidirectional encoders of image patches (core/spec/families/vision.h).
// ModernBERT is the modern encoder: rope, bias-free pre-LayerNorm layers (none before
// layer 0's attention), GeGLU, and local layers with a bidirectional window.
#include "core/spec/architecture_write.h"
#include "core/spec/families/vision.h"
#include "core/spec/hf_models.h"

#include <fmt/format.h>

namespace fk::spec::hf {
namespace {

void mha_head_dim(ConfigReader& r, Architecture& a, const char* hidden_key, const char* heads_key) {
  a.num_key_value_heads = a.num_attention_heads;
  if (a.hidden_size % a.num_attention_heads != 0)
    r.fail(heads_key,
           fmt::format("found {}, expected a divisor of {} ({})", a.num_attention_heads, hidden_key, a.hidden_size));
  a.head_dim = a.hidden_size / a.num_attention_heads;
}

// hidden_size, num_hidden_layers and num_attention_heads under HF's usual keys, each
// with its class default, and the head size they make (multi-head attention).
void mha_shape(ConfigReader& r, Architecture& a, int64_t hidden, int64_t layers, int64_t heads) {
  a.hidden_size = r.integer_or("hidden_size", hidden, limits::kHiddenSize);
  a.num_hidden_layers = r.integer_or("num_hidden_layers", layers, limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer_or("num_attention_heads", heads, limits::kHeads);
  mha_head_dim(r, a, "hidden_size", "num_attention_heads");
}

// What BERT and GPT-2 share: biased projections, ungated biased MLP, LayerNorm,
// learned positions, every layer full attention.
void classic_common(ConfigReader& r, Architecture& a) {
  a.attention.qkv_bias = true;
  a.attention.out_bias = true;
  a.mlp.gated = false;
  a.mlp.bias = true;
  a.norm.kind = NormKind::kLayerNorm;
  a.norm.weight_offset = 0.0;
  a.position.kind = PositionKind::kLearned;
  set_layer_pattern(r, a, std::vector<LayerType>(static_cast<size_t>(a.num_hidden_layers), LayerType::kFull),
                    std::nullopt, "sliding_window");
}

// GPT-2's keys and layer, for gpt2 and gpt_bigcode (their class default activation).
void gpt2_body(ConfigReader& r, Architecture& a, const char* default_activation) {
  a.hidden_size = r.integer("n_embd", limits::kHiddenSize);
  a.num_hidden_layers = r.integer("n_layer", limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer("n_head", limits::kHeads);
  mha_head_dim(r, a, "n_embd", "n_head");
  a.vocab_size = r.integer("vocab_size", limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("n_positions", 1024, limits::kMaxPositionEmbeddings);
  read_inner_or_4x(r, a, "n_inner", "n_embd");
  a.mlp.activation =
      activation_from(r, "activation_function", r.string_or("activation_function", default_activation));
  a.norm.eps = r.number_or("layer_norm_epsilon", 1e-5, limits::kNormEps);
  a.embedding.tied = r.boolean_or("tie_word_embeddings", true);
  if (!r.boolean_or("scale_attn_weights", true))
    r.fail("scale_attn_weights", "found false, expected true (attention scores are always scaled by 1/sqrt(head_dim))");
  if (r.boolean_or("scale_attn_by_inverse_layer_idx", false))
    r.fail("scale_attn_by_inverse_layer_idx", "found true, expected false (per-layer score scaling is not supported)");
  r.ignore({"n_ctx", "is_decoder"});  // n_ctx: the legacy copy of n_positions
  classic_common(r, a);
  a.attention.causal = true;
  a.norm.placement = NormPlacement::kPre;
  a.head.kind = HeadKind::kLm;
  a.head.final_norm = true;  // ln_f
}

}  // namespace

namespace {

// BERT's encoder and the keys its relatives share (hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size, vocab_size, max_position_embeddings,
// type_vocab_size, layer_norm_eps, hidden_act, position_embedding_type, is_decoder):
// post-LayerNorm layers, learned positions, token types, an embedding LayerNorm, no LM
// head (the masked-LM head is not imported, so its tying does not matter).
void bert_encoder(ConfigReader& r, Architecture& a, int64_t default_vocab) {
  a.hidden_size = r.integer("hidden_size", limits::kHiddenSize);
  a.num_hidden_layers = r.integer("num_hidden_layers", limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer("num_attention_heads", limits::kHeads);
  mha_head_dim(r, a, "hidden_size", "num_attention_heads");
  a.intermediate_size = r.integer("intermediate_size", limits::kIntermediateSize);
  a.vocab_size = r.integer_or("vocab_size", default_vocab, limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("max_position_embeddings", 512, limits::kMaxPositionEmbeddings);
  a.embedding.type_vocab_size = r.integer_or("type_vocab_size", 2, limits::kTypeVocabSize);
  a.norm.eps = r.number_or("layer_norm_eps", 1e-12, limits::kNormEps);
  a.mlp.activation = activation_from(r, "hidden_act", r.string_or("hidden_act", "gelu"));
  const std::string pos = r.string_or("position_embedding_type", "absolute");
  if (pos != "absolute")
    r.fail("position_embedding_type",
           fmt::format("found \"{}\", expected \"absolute\" (relative position scores are not supported)", pos));
  if (r.boolean_or("is_decoder", false))
    r.fail("is_decoder", fmt::format("found true, expected false ({} imports as the bidirectional encoder)", r.cls()));
  r.ignore({"tie_word_embeddings"});
  classic_common(r, a);
  a.attention.causal = false;
  a.norm.placement = NormPlacement::kPost;
  a.embedding.tied = false;
  a.embedding.norm = true;  // embeddings.LayerNorm
  a.head.kind = HeadKind::kNone;
  a.head.final_norm = false;
}

}  // namespace

void fill_bert(ConfigReader& r, Architecture& a) { bert_encoder(r, a, 30522); }

// RoBERTa, XLM-RoBERTa and CamemBERT: BERT's encoder with fairseq positions. Position
// ids start at pad_token_id + 1 (padding tokens aside), so with the pad id of 1 that all
// three use, position p reads row p + 2 of a table of max_position_embeddings rows: the
// usable positions are two fewer.
void fill_roberta(ConfigReader& r, Architecture& a) {
  bert_encoder(r, a, r.cls() == "RobertaConfig" ? 50265 : 30522);
  const Json* pad = r.get("pad_token_id");
  if (pad == nullptr) r.note_default("pad_token_id", "1");
  if (pad != nullptr && *pad != 1)
    r.fail_value("pad_token_id", *pad, "1 (positions start at pad_token_id + 1; other offsets are not supported)");
  if (a.max_position_embeddings <= 2)
    r.fail("max_position_embeddings", fmt::format("found {}, expected more than 2 (rows 0 and 1 are the padding rows)",
                                                  a.max_position_embeddings));
  a.max_position_embeddings -= 2;
}

// ELECTRA (the discriminator's ElectraModel): BERT's encoder when the embeddings are
// hidden_size wide; narrower embeddings go through embeddings_project, which is not
// supported (ELECTRA-small).
void fill_electra(ConfigReader& r, Architecture& a) {
  bert_encoder(r, a, 30522);
  const int64_t e = r.integer_or("embedding_size", 128, limits::kHiddenSize);
  if (e != a.hidden_size)
    r.fail("embedding_size", fmt::format("found {}, expected hidden_size ({}) (projecting narrower embeddings up, "
                                         "embeddings_project, is not supported)",
                                         e, a.hidden_size));
  r.ignore({"summary_type", "summary_use_proj", "summary_activation", "summary_last_dropout"});  // heads only
}

// DistilBERT: BERT's post-LayerNorm encoder under its own keys, without token types; every
// LayerNorm's eps is 1e-12. sinusoidal_pos_embds only initialises the stored table.
void fill_distilbert(ConfigReader& r, Architecture& a) {
  a.hidden_size = r.integer_or("dim", 768, limits::kHiddenSize);
  a.num_hidden_layers = r.integer_or("n_layers", 6, limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer_or("n_heads", 12, limits::kHeads);
  mha_head_dim(r, a, "dim", "n_heads");
  read_inner_or_4x(r, a, "hidden_dim", "dim");
  a.vocab_size = r.integer_or("vocab_size", 30522, limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("max_position_embeddings", 512, limits::kMaxPositionEmbeddings);
  a.mlp.activation = activation_from(r, "activation", r.string_or("activation", "gelu"));
  r.ignore({"sinusoidal_pos_embds", "dropout", "qa_dropout", "seq_classif_dropout", "tie_word_embeddings"});
  classic_common(r, a);
  a.norm.eps = 1e-12;
  a.attention.causal = false;
  a.norm.placement = NormPlacement::kPost;
  a.embedding.type_vocab_size = 0;
  a.embedding.tied = false;
  a.embedding.norm = true;
  a.head.kind = HeadKind::kNone;
  a.head.final_norm = false;
}

void fill_gpt2(ConfigReader& r, Architecture& a) {
  gpt2_body(r, a, "gelu_new");
  // reorder_and_upcast_attn changes only the precision of the score matmul; summary_*
  // configure the double-heads model's head.
  r.ignore({"reorder_and_upcast_attn", "summary_type", "summary_use_proj", "summary_activation",
            "summary_proj_to_labels", "summary_first_dropout"});
}

// GPT-BigCode: multi_query (default true) gives one kv head; the softmax precision
// switches change rounding only.
void fill_gpt_bigcode(ConfigReader& r, Architecture& a) {
  gpt2_body(r, a, "gelu_pytorch_tanh");
  if (r.boolean_or("multi_query", true)) a.num_key_value_heads = 1;
  // transformers 5 writes the kv head count multi_query implies; it must agree.
  if (const Json* kv = r.get("num_key_value_heads"); kv != nullptr && *kv != a.num_key_value_heads)
    r.fail_value("num_key_value_heads", *kv,
                 fmt::format("{} (multi_query gives {} kv heads)", a.num_key_value_heads, a.num_key_value_heads));
  r.ignore({"attention_softmax_in_fp32", "scale_attention_softmax_in_fp32"});
}

namespace {

// GPT-Neo's attention_types ([[["global", "local"], 12]]: each list repeated its count of
// times) as per-layer kinds; an attention_layers key (the expanded list HF derives and
// some configs carry) must agree.
std::vector<LayerType> gpt_neo_layers(ConfigReader& r, int64_t layers) {
  std::vector<std::string> names;
  const Json* types = r.get("attention_types");
  if (types == nullptr) {
    r.note_default("attention_types", "[[[\"global\", \"local\"], 12]]");
    for (int i = 0; i < 12; ++i) names.insert(names.end(), {"global", "local"});
  } else {
    const auto bad = [&] { r.fail_value("attention_types", *types, "a list of [[kind, ...], count] pairs"); };
    if (!types->is_array()) bad();
    for (const Json& item : *types) {
      if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer() ||
          item[1].get<int64_t>() < 0 || item[1].get<int64_t>() > limits::kNumHiddenLayers.max)
        bad();
      for (int64_t i = 0; i < item[1].get<int64_t>(); ++i)
        for (const Json& k : item[0]) {
          if (!k.is_string()) bad();
          names.push_back(k.get<std::string>());
        }
    }
  }
  if (static_cast<int64_t>(names.size()) != layers)
    r.fail("attention_types", fmt::format("gives {} layers, expected num_layers ({})", names.size(), layers));
  if (const Json* listed = r.get("attention_layers"); listed != nullptr && *listed != Json(names))
    r.fail_value("attention_layers", *listed, "the expansion of attention_types");
  std::vector<LayerType> out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "global" && names[i] != "local")
      r.fail("attention_types", fmt::format("layer {} is \"{}\", expected \"global\" or \"local\"", i, names[i]));
    out.push_back(names[i] == "local" ? LayerType::kSliding : LayerType::kFull);
  }
  return out;
}

}  // namespace

// GPT-Neo: GPT-2's pre-LayerNorm layer with Linear projections, no q/k/v bias, scores
// not scaled (a softmax scale of 1), and local layers attending to the last window_size
// tokens (the query's own included).
void fill_gpt_neo(ConfigReader& r, Architecture& a) {
  a.hidden_size = r.integer_or("hidden_size", 2048, limits::kHiddenSize);
  a.num_hidden_layers = r.integer_or("num_layers", 24, limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer_or("num_heads", 16, limits::kHeads);
  mha_head_dim(r, a, "hidden_size", "num_heads");
  a.vocab_size = r.integer_or("vocab_size", 50257, limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("max_position_embeddings", 2048, limits::kMaxPositionEmbeddings);
  read_inner_or_4x(r, a, "intermediate_size", "hidden_size");
  a.mlp.activation = activation_from(r, "activation_function", r.string_or("activation_function", "gelu_new"));
  a.norm.eps = r.number_or("layer_norm_epsilon", 1e-5, limits::kNormEps);
  a.embedding.tied = r.boolean_or("tie_word_embeddings", true);
  const std::vector<LayerType> per_layer = gpt_neo_layers(r, a.num_hidden_layers);
  const int64_t window = r.integer_or("window_size", 256, limits::kSlidingWindow);
  r.ignore({"resid_dropout", "embed_dropout", "classifier_dropout", "is_decoder"});
  classic_common(r, a);
  set_layer_pattern(r, a, per_layer, window, "window_size");
  a.attention.qkv_bias = false;  // GPTNeoSelfAttention: q/k/v_proj without bias, out_proj with
  a.attention.out_bias = true;
  a.attention.scale = 1.0;
  a.attention.causal = true;
  a.norm.placement = NormPlacement::kPre;
  a.head.kind = HeadKind::kLm;
  a.head.final_norm = true;  // ln_f
}

// BioGPT: OPT's decoder (learned positions stored from row 2, biases everywhere, pre-
// LayerNorm) with token embeddings x sqrt(hidden_size) under scale_embedding; every
// LayerNorm is nn.LayerNorm's default eps (layer_norm_eps is read by no module).
void fill_biogpt(ConfigReader& r, Architecture& a) {
  mha_shape(r, a, 1024, 24, 16);
  a.intermediate_size = r.integer_or("intermediate_size", 4096, limits::kIntermediateSize);
  a.vocab_size = r.integer_or("vocab_size", 42384, limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("max_position_embeddings", 1024, limits::kMaxPositionEmbeddings);
  a.mlp.activation = activation_from(r, "hidden_act", r.string_or("hidden_act", "gelu"));
  a.embedding.tied = r.boolean_or("tie_word_embeddings", true);
  a.embedding.scale_by_sqrt_hidden = r.boolean_or("scale_embedding", true);
  r.ignore({"layer_norm_eps", "hidden_dropout_prob", "attention_probs_dropout_prob", "activation_dropout", "layerdrop",
            "is_decoder"});
  classic_common(r, a);
  a.norm.eps = 1e-5;
  a.attention.causal = true;
  a.norm.placement = NormPlacement::kPre;
  a.head.kind = HeadKind::kLm;
  a.head.final_norm = true;  // biogpt.layer_norm
}

void fill_opt(ConfigReader& r, Architecture& a) {
  mha_shape(r, a, 768, 12, 12);
  a.intermediate_size = r.integer_or("ffn_dim", 3072, limits::kIntermediateSize);
  a.vocab_size = r.integer_or("vocab_size", 50272, limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("max_position_embeddings", 2048, limits::kMaxPositionEmbeddings);
  a.mlp.activation = activation_from(r, "activation_function", r.string_or("activation_function", "relu"));
  a.embedding.tied = r.boolean_or("tie_word_embeddings", true);
  if (!r.boolean_or("do_layer_norm_before", true))
    r.fail("do_layer_norm_before", "found false, expected true (OPT-350m's post-LayerNorm layers are not supported)");
  if (const Json* p = r.get("word_embed_proj_dim"); p != nullptr && !p->is_null() && *p != a.hidden_size)
    r.fail_value("word_embed_proj_dim", *p,
                 fmt::format("null or hidden_size ({}) (projecting embeddings in and out is not supported)",
                             a.hidden_size));
  if (!r.boolean_or("enable_bias", true))
    r.fail("enable_bias", "found false, expected true (OPT projections without bias are not supported)");
  if (!r.boolean_or("layer_norm_elementwise_affine", true))
    r.fail("layer_norm_elementwise_affine", "found false, expected true (LayerNorm without weights is not supported)");
  if (r.boolean_or("_remove_final_layer_norm", false))
    r.fail("_remove_final_layer_norm", "found true, expected false (the final LayerNorm is read)");
  // layerdrop drops layers in training only; init_std initialises.
  r.ignore({"layerdrop", "init_std", "dropout", "is_decoder"});
  classic_common(r, a);
  a.attention.causal = true;
  a.norm.placement = NormPlacement::kPre;
  a.norm.eps = 1e-5;  // OPTDecoderLayer: nn.LayerNorm's default eps
  a.head.kind = HeadKind::kLm;
  a.head.final_norm = true;
}

void fill_starcoder2(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a,
                    {.max_position_embeddings = 4096,
                     .rms_norm_eps = 1e-5,
                     .tie_word_embeddings = true,
                     .num_key_value_heads = 2,
                     .vocab_size = 49152,
                     .hidden_act = "gelu_pytorch_tanh",
                     .norm_eps_key = "norm_epsilon"});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  const bool bias = r.boolean_or("use_bias", true);  // q/k/v/o_proj, c_fc and c_proj
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  a.mlp.gated = false;
  a.mlp.bias = bias;
  a.norm.kind = NormKind::kLayerNorm;  // nn.LayerNorm with bias, pre-norm
  // residual_dropout and embedding_dropout apply in training only.
  r.ignore({"residual_dropout", "embedding_dropout", "is_decoder"});
  const std::optional<int64_t> window = read_window(r, std::nullopt);
  set_layer_pattern(r, a,
                    std::vector<LayerType>(static_cast<size_t>(a.num_hidden_layers),
                                           window ? LayerType::kSliding : LayerType::kFull),
                    window, "sliding_window");
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
}

namespace {

// What ViT, DINOv2 and SigLIP's vision tower share: image_size, patch_size, num_channels;
// pre-LayerNorm bidirectional layers of biased projections and an ungated biased MLP;
// learned positions for every token of an image; the final LayerNorm's hidden states as
// the output (poolers and classifier heads are not imported).
VisionSpec& vision_encoder(ConfigReader& r, Architecture& a, int64_t image, int64_t patch, double eps, const char* act,
                           bool class_token) {
  mha_shape(r, a, 768, 12, 12);
  a.norm.eps = r.number_or("layer_norm_eps", eps, limits::kNormEps);
  a.mlp.activation = activation_from(r, "hidden_act", r.string_or("hidden_act", act));
  VisionSpec& v = a.sections.edit<VisionSpec>();
  v.image_size = r.integer_or("image_size", image, limits::kVisionImageSize);
  v.patch_size = r.integer_or("patch_size", patch, limits::kVisionPatchSize);
  v.num_channels = r.integer_or("num_channels", 3, limits::kVisionChannels);
  v.class_token = class_token;
  if (v.patch_size > v.image_size)
    r.fail("patch_size", fmt::format("found {}, expected at most image_size ({})", v.patch_size, v.image_size));
  classic_common(r, a);
  a.vocab_size = 0;
  a.max_position_embeddings = v.tokens();
  a.attention.causal = false;
  a.norm.placement = NormPlacement::kPre;
  a.embedding.tied = false;
  a.embedding.type_vocab_size = 0;
  a.head.kind = HeadKind::kNone;
  a.head.final_norm = true;
  // Dropouts and initialisation; encoder_stride sizes the masked-image-modeling decoder.
  r.ignore({"hidden_dropout_prob", "attention_probs_dropout_prob", "attention_dropout", "initializer_range",
            "initializer_factor", "encoder_stride", "drop_path_rate", "tie_word_embeddings"});
  return v;
}

}  // namespace

// ViT (ViTModel): a class token and learned positions; qkv_bias on the query, key and
// value projections (the others always have one).
void fill_vit(ConfigReader& r, Architecture& a) {
  vision_encoder(r, a, 224, 16, 1e-12, "gelu", true);
  a.intermediate_size = r.integer_or("intermediate_size", 3072, limits::kIntermediateSize);
  if (!r.boolean_or("qkv_bias", true))
    r.fail("qkv_bias", "found false, expected true (projections without a bias beside biased ones are not supported)");
  r.ignore({"pooler_output_size", "pooler_act"});  // the pooler is not imported
}

// DINOv2 (Dinov2Model): ViT's front (its position interpolation is the identity at the
// configured image_size), an MLP of mlp_ratio x hidden_size, and LayerScale on both
// branches. The SwiGLU MLP (use_swiglu_ffn, the giant model's) is not supported.
void fill_dinov2(ConfigReader& r, Architecture& a) {
  VisionSpec& v = vision_encoder(r, a, 224, 14, 1e-6, "gelu", true);
  const double ratio = r.number_or("mlp_ratio", 4.0);
  a.intermediate_size = static_cast<int64_t>(static_cast<double>(a.hidden_size) * ratio);
  if (a.intermediate_size < 1) r.fail("mlp_ratio", fmt::format("found {}, expected a positive ratio", ratio));
  v.layer_scale = true;
  if (r.boolean_or("use_swiglu_ffn", false))
    r.fail("use_swiglu_ffn", "found true, expected false (DINOv2's SwiGLU MLP, fused weights_in, is not supported)");
  if (!r.boolean_or("qkv_bias", true))
    r.fail("qkv_bias", "found false, expected true (projections without a bias beside biased ones are not supported)");
  // layerscale_value initialises the scales (stored in the weights); the backbone keys
  // choose which hidden states Dinov2Backbone returns; use_mask_token adds the masked-
  // image token, unused without bool_masked_pos.
  r.ignore({"layerscale_value", "out_features", "out_indices", "stage_names", "apply_layernorm",
            "reshape_hidden_states", "use_mask_token"});
}

// SigLIP's vision tower (SiglipVisionModel): no class token, positions from an Embedding
// of (image_size / patch_size)^2 rows, gelu_pytorch_tanh, post_layernorm. Its attention-
// pooling head (vision_use_head) gives the pooled output only: not imported.
void fill_siglip_vision(ConfigReader& r, Architecture& a) {
  vision_encoder(r, a, 224, 16, 1e-6, "gelu_pytorch_tanh", false);
  a.intermediate_size = r.integer_or("intermediate_size", 3072, limits::kIntermediateSize);
  r.ignore({"vision_use_head"});
}

// ModernBERT (ModernBertModel; ModernBertForMaskedLM keeps it under `model.`): every
// global_attn_every_n_layers-th layer (from layer 0) is global, the others local, each
// attending to the tokens within local_attention / 2 positions on either side (HF's
// bidirectional sliding-window mask, |i - j| <= local_attention / 2: a window of
// local_attention / 2 + 1 in the spec's terms); global layers rotate with
// global_rope_theta, local ones with local_rope_theta (5.x: layer_types and a
// rope_parameters entry per layer type). LayerNorms have a bias only with norm_bias; the
// embeddings end in one, so layer 0's attention has none (norm.first_attention_norm
// false); the MLP is Wi -> (input, gate) -> act(input) * gate -> Wo. The masked-LM and
// classifier heads are not imported.
void fill_modernbert(ConfigReader& r, Architecture& a) {
  mha_shape(r, a, 768, 22, 12);
  a.intermediate_size = r.integer_or("intermediate_size", 1152, limits::kIntermediateSize);
  a.vocab_size = r.integer_or("vocab_size", 50368, limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("max_position_embeddings", 8192, limits::kMaxPositionEmbeddings);
  a.mlp.activation = activation_from(r, "hidden_activation", r.string_or("hidden_activation", "gelu"));
  a.mlp.gated = true;
  a.mlp.bias = r.boolean_or("mlp_bias", false);
  a.attention.causal = false;
  a.attention.qkv_bias = a.attention.out_bias = r.boolean_or("attention_bias", false);
  a.norm.kind = NormKind::kLayerNorm;
  a.norm.placement = NormPlacement::kPre;
  a.norm.eps = r.number_or("norm_eps", 1e-5, limits::kNormEps);
  a.norm.bias = r.boolean_or("norm_bias", false);
  a.norm.first_attention_norm = false;
  a.embedding.norm = true;  // embeddings.norm
  a.embedding.tied = false;
  a.head.kind = HeadKind::kNone;
  a.head.final_norm = true;  // final_norm

  const int64_t every = r.integer_or("global_attn_every_n_layers", 3, limits::kNumHiddenLayers);
  std::vector<LayerType> pattern;
  for (int64_t l = 0; l < a.num_hidden_layers; ++l)
    pattern.push_back(l % every != 0 ? LayerType::kSliding : LayerType::kFull);
  // HF sizes a layer's window by global_attn_every_n_layers and masks it by layer_types:
  // the two must agree.
  if (const auto types = read_layer_types(r, a.num_hidden_layers); types && *types != pattern) {
    for (size_t l = 0; l < pattern.size(); ++l)
      if ((*types)[l] != pattern[l])
        r.fail(fmt::format("layer_types[{}]", l),
               fmt::format("found \"{}_attention\", expected \"{}_attention\" (global_attn_every_n_layers = {})",
                           (*types)[l] == LayerType::kSliding ? "sliding" : "full",
                           pattern[l] == LayerType::kSliding ? "sliding" : "full", every));
  }
  const int64_t local = r.integer_or("local_attention", 128, limits::kMaxPositionEmbeddings);
  set_layer_pattern(r, a, pattern, local / 2 + 1, "local_attention");

  // 4.x: global_rope_theta / local_rope_theta; 5.x: rope_parameters per layer type.
  auto theta = [&](const char* key) -> std::optional<double> {
    if (!r.has_value(key)) {
      r.ignore({key});  // absent or null: the other form's value or the class default
      return std::nullopt;
    }
    const double v = r.number(key);
    if (v <= 0) r.fail(key, fmt::format("found {}, expected a number > 0", yaml_float_text(v)));
    return v;
  };
  const std::optional<double> global = theta("global_rope_theta");
  const std::optional<double> local_theta = theta("local_rope_theta");
  const RopeRead rope = read_rope(r, global.value_or(160000.0));
  if (rope.keyed) {
    if (global && *global != rope.theta)
      r.fail("global_rope_theta",
             fmt::format("found {}, expected the same as rope_parameters.full_attention.rope_theta "
                         "({})",
                         yaml_float_text(*global), yaml_float_text(rope.theta)));
    if (local_theta && rope.sliding_theta && *local_theta != *rope.sliding_theta)
      r.fail("local_rope_theta", fmt::format("found {}, expected the same as rope_parameters.sliding_attention."
                                             "rope_theta ({})",
                                             yaml_float_text(*local_theta), yaml_float_text(*rope.sliding_theta)));
  }
  apply_rope(r, a, rope, local_theta.value_or(10000.0), false);
  if (a.position.rope_scaling.type != RopeScalingType::kNone)
    r.fail(r.has_value("rope_parameters") ? "rope_parameters" : "rope_scaling",
           "found rope scaling, expected none (ModernBERT rotates with plain rope)");

  const std::string pooling = r.string_or("classifier_pooling", "cls");
  if (pooling != "cls" && pooling != "mean")
    r.fail("classifier_pooling", fmt::format("found \"{}\", expected \"cls\" or \"mean\"", pooling));
  r.ignore({"norm_bias", "cls_token_id", "sep_token_id", "initializer_cutoff_factor", "embedding_dropout",
            "mlp_dropout", "decoder_bias", "classifier_bias", "classifier_activation", "deterministic_flash_attn",
            "sparse_prediction", "sparse_pred_ignore_index", "reference_compile", "repad_logits_with_grad",
            "tie_word_embeddings", "layer_norm_eps", "position_embedding_type"});
}

}  // namespace fk::spec::hf
