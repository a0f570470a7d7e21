// BERT (BertModel: bidirectional encoder, post-LayerNorm, learned absolute
// positions, token types, no LM head) and GPT-2 (pre-LayerNorm decoder with learned
// positions, Conv1D projections with bias, tied LM head). Both are multi-head
// attention with biases everywhere and an ungated MLP.
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

}  // namespace

void fill_bert(ConfigReader& r, Architecture& a) {
  a.hidden_size = r.integer("hidden_size", limits::kHiddenSize);
  a.num_hidden_layers = r.integer("num_hidden_layers", limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer("num_attention_heads", limits::kHeads);
  mha_head_dim(r, a, "hidden_size", "num_attention_heads");
  a.intermediate_size = r.integer("intermediate_size", limits::kIntermediateSize);
  a.vocab_size = r.integer("vocab_size", limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("max_position_embeddings", 512, limits::kMaxPositionEmbeddings);
  a.embedding.type_vocab_size = r.integer_or("type_vocab_size", 2, limits::kTypeVocabSize);
  a.norm.eps = r.number_or("layer_norm_eps", 1e-12, limits::kNormEps);
  a.mlp.activation = activation_from(r, "hidden_act", r.string_or("hidden_act", "gelu"));
  const std::string pos = r.string_or("position_embedding_type", "absolute");
  if (pos != "absolute")
    r.fail("position_embedding_type",
           fmt::format("found \"{}\", expected \"absolute\" (relative position scores are not supported)", pos));
  if (r.boolean_or("is_decoder", false))
    r.fail("is_decoder", "found true, expected false (BERT imports as the bidirectional encoder)");
  // BertModel has no LM head; the masked-LM head of BertForMaskedLM is not imported,
  // so whether it would be tied does not matter.
  r.ignore({"tie_word_embeddings"});
  classic_common(r, a);
  a.attention.causal = false;
  a.norm.placement = NormPlacement::kPost;
  a.embedding.tied = false;
  a.embedding.norm = true;  // BertEmbeddings.LayerNorm
  a.head.kind = HeadKind::kNone;
  a.head.final_norm = false;
}

void fill_gpt2(ConfigReader& r, Architecture& a) {
  a.hidden_size = r.integer("n_embd", limits::kHiddenSize);
  a.num_hidden_layers = r.integer("n_layer", limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer("n_head", limits::kHeads);
  mha_head_dim(r, a, "n_embd", "n_head");
  a.vocab_size = r.integer("vocab_size", limits::kVocabSize);
  a.max_position_embeddings = r.integer_or("n_positions", 1024, limits::kMaxPositionEmbeddings);
  if (const auto inner = r.optional_integer("n_inner", limits::kIntermediateSize)) {
    a.intermediate_size = *inner;
  } else {
    a.intermediate_size = 4 * a.hidden_size;  // GPT2MLP: n_inner or 4 * n_embd
    r.note_default("n_inner", fmt::format("4 x n_embd ({})", a.intermediate_size));
  }
  a.mlp.activation = activation_from(r, "activation_function", r.string_or("activation_function", "gelu_new"));
  a.norm.eps = r.number_or("layer_norm_epsilon", 1e-5, limits::kNormEps);
  a.embedding.tied = r.boolean_or("tie_word_embeddings", true);
  if (!r.boolean_or("scale_attn_weights", true))
    r.fail("scale_attn_weights", "found false, expected true (attention scores are always scaled by 1/sqrt(head_dim))");
  if (r.boolean_or("scale_attn_by_inverse_layer_idx", false))
    r.fail("scale_attn_by_inverse_layer_idx", "found true, expected false (per-layer score scaling is not supported)");
  // n_ctx is the legacy copy of n_positions; reorder_and_upcast_attn changes only the
  // precision of the score matmul; summary_* configure the double-heads model's head.
  r.ignore({"n_ctx", "reorder_and_upcast_attn", "is_decoder", "summary_type", "summary_use_proj", "summary_activation",
            "summary_proj_to_labels", "summary_first_dropout"});
  classic_common(r, a);
  a.attention.causal = true;
  a.norm.placement = NormPlacement::kPre;
  a.head.kind = HeadKind::kLm;
  a.head.final_norm = true;  // ln_f
}

}  // namespace fk::spec::hf
