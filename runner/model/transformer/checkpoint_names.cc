// The transformer family's checkpoint names (checkpoint_names.h).
#include "runner/model/transformer/checkpoint_names.h"

#include "core/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <regex>

namespace fk::runner {
namespace {

using spec::Architecture;

// "model.layers.<l>.<rest>" -> (l, rest); false for other names.
bool split_layer(const std::string& name, int64_t* layer, std::string* rest) {
  static const std::regex re(R"(^model\.layers\.(\d+)\.(.+)$)");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return false;
  *layer = std::stoll(m[1].str());
  *rest = m[2].str();
  return true;
}

// A layer's "self_attn.{q,k,v}_proj.{weight,bias}": which projection (0 q, 1 k, 2 v)
// and which tensor ("weight" or "bias"); nullopt for other names.
struct QkvName {
  int64_t part;
  std::string what;
};
std::optional<QkvName> qkv_name(const std::string& rest) {
  static const std::regex re(R"(^self_attn\.(q|k|v)_proj\.(weight|bias)$)");
  std::smatch m;
  if (!std::regex_match(rest, m, re)) return std::nullopt;
  return QkvName{m[1].str() == "q" ? 0 : m[1].str() == "k" ? 1 : 2, m[2].str()};
}

// Projection `part`'s rows of a fused tensor holding each head's q, k and v rows in
// turn ([heads, 3, head_dim] rows: GPT-NeoX, multi-head GPT-BigCode), read gathered.
TensorRef per_head_qkv(std::string name, int64_t part, int64_t head_dim, int64_t heads) {
  TensorRef ref{std::move(name), part * head_dim, 3 * heads * head_dim};
  ref.group = head_dim;
  ref.stride = 3 * head_dim;
  return ref;
}

// Projection `part`'s rows of a fused tensor grouped by kv head: each group holds its
// heads / kv_heads q heads, then its k head, then its v head (Falcon's query_key_value;
// one group is multi-query's [q..., k, v], as many groups as heads is per_head_qkv's).
TensorRef grouped_qkv(std::string name, int64_t part, int64_t head_dim, int64_t heads, int64_t kv_heads) {
  const int64_t per = heads / kv_heads, group_rows = (per + 2) * head_dim;
  TensorRef ref{std::move(name), part == 0 ? 0 : (per + part - 1) * head_dim, kv_heads * group_rows};
  ref.group = part == 0 ? per * head_dim : head_dim;
  ref.stride = group_rows;
  return ref;
}

// Names as the Llama family stores them (llama, mistral, qwen2, qwen3, qwen3_moe,
// gemma2, gemma3_text): the canonical names themselves.
TensorRef same(const std::string& canonical, const Architecture&) { return {canonical}; }

TensorRef mixtral(const std::string& canonical, const Architecture&) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  static const std::regex expert(R"(^mlp\.experts\.(\d+)\.(gate|up|down)_proj\.weight$)");
  std::smatch m;
  const std::string base = fmt::format("model.layers.{}.", l);
  if (std::regex_match(rest, m, expert)) {
    const std::string w = m[2].str() == "gate" ? "w1" : m[2].str() == "up" ? "w3" : "w2";
    return {fmt::format("{}block_sparse_moe.experts.{}.{}.weight", base, m[1].str(), w)};
  }
  if (rest == "mlp.gate.weight") return {base + "block_sparse_moe.gate.weight"};
  return {canonical};
}

// DeepSeek-V3 and V2: the canonical names (MLA's self_attn.q_a_proj ... kv_b_proj, the router's
// mlp.gate.e_score_correction_bias are HF's own), except the shared experts, which HF
// keeps under mlp.shared_experts.
TensorRef deepseek(const std::string& canonical, const Architecture&) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  static const std::string shared = "mlp.shared_expert.";
  if (rest.rfind(shared, 0) == 0)
    return {fmt::format("model.layers.{}.mlp.shared_experts.{}", l, rest.substr(shared.size()))};
  return {canonical};
}

// Jamba and Bamba (JambaForCausalLM, BambaForCausalLM): the feed-forward is
// feed_forward (Jamba's router feed_forward.router), the MLP's norm pre_ff_layernorm, the
// final norm final_layernorm; attention and the Mamba layers' tensors (mamba.*) are
// canonical.
TensorRef jamba(const std::string& canonical, const Architecture&) {
  if (canonical == "model.norm.weight") return {"model.final_layernorm.weight"};
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string base = fmt::format("model.layers.{}.", l);
  if (rest == "post_attention_layernorm.weight") return {base + "pre_ff_layernorm.weight"};
  if (rest == "mlp.gate.weight") return {base + "feed_forward.router.weight"};
  if (rest.rfind("mlp.", 0) == 0) return {base + "feed_forward." + rest.substr(4)};
  return {canonical};
}

// A layer's gate and up projections (weights and biases) as the halves of one fused
// tensor, gate first: `fused` is Phi-3's and GLM's mlp.gate_up_proj, ModernBERT's mlp.Wi;
// nullopt for other names.
std::optional<TensorRef> fused_gate_up(const std::string& rest, const std::string& base, int64_t inter,
                                       const std::string& fused = "mlp.gate_up_proj") {
  for (const char* what : {"weight", "bias"}) {
    if (rest == fmt::format("mlp.gate_proj.{}", what)) return TensorRef{base + fused + "." + what, 0, 2 * inter};
    if (rest == fmt::format("mlp.up_proj.{}", what)) return TensorRef{base + fused + "." + what, inter, 2 * inter};
  }
  return std::nullopt;
}

TensorRef phi3(const std::string& canonical, const Architecture& a) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string base = fmt::format("model.layers.{}.", l);
  const int64_t q = a.num_attention_heads * a.head_dim, kv = a.num_key_value_heads * a.head_dim;
  const int64_t qkv = q + 2 * kv;
  if (rest == "self_attn.q_proj.weight") return {base + "self_attn.qkv_proj.weight", 0, qkv};
  if (rest == "self_attn.k_proj.weight") return {base + "self_attn.qkv_proj.weight", q, qkv};
  if (rest == "self_attn.v_proj.weight") return {base + "self_attn.qkv_proj.weight", q + kv, qkv};
  if (auto r = fused_gate_up(rest, base, a.intermediate_size)) return *r;
  return {canonical};
}

TensorRef gpt2(const std::string& canonical, const Architecture& a) {
  if (canonical == "model.embed_tokens.weight") return {"wte.weight"};
  if (canonical == "model.embed_positions.weight") return {"wpe.weight"};
  if (canonical == "model.norm.weight") return {"ln_f.weight"};
  if (canonical == "model.norm.bias") return {"ln_f.bias"};
  if (canonical == "lm_head.weight") return {"lm_head.weight"};
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string h = fmt::format("h.{}.", l);
  const int64_t n = a.hidden_size;
  if (const auto p = qkv_name(rest)) return {h + "attn.c_attn." + p->what, p->part * n, 3 * n, p->what == "weight"};
  auto conv = [&](const std::string& module, const std::string& what) {
    return TensorRef{h + module + "." + what, 0, 0, what == "weight"};
  };
  if (rest == "self_attn.o_proj.weight") return conv("attn.c_proj", "weight");
  if (rest == "self_attn.o_proj.bias") return conv("attn.c_proj", "bias");
  if (rest == "mlp.fc1.weight") return conv("mlp.c_fc", "weight");
  if (rest == "mlp.fc1.bias") return conv("mlp.c_fc", "bias");
  if (rest == "mlp.fc2.weight") return conv("mlp.c_proj", "weight");
  if (rest == "mlp.fc2.bias") return conv("mlp.c_proj", "bias");
  if (rest.rfind("input_layernorm.", 0) == 0) return {h + "ln_1." + rest.substr(16)};
  if (rest.rfind("post_attention_layernorm.", 0) == 0) return {h + "ln_2." + rest.substr(25)};
  return {canonical};
}

// "<prefix>" + rest for every canonical name that starts with `from` (a norm's weight
// and bias), or nullopt.
std::optional<TensorRef> renamed(const std::string& rest, const std::string& from, const std::string& to) {
  if (rest.rfind(from, 0) != 0) return std::nullopt;
  return TensorRef{to + rest.substr(from.size())};
}

TensorRef bert(const std::string& canonical, const Architecture&) {
  if (canonical == "model.embed_tokens.weight") return {"embeddings.word_embeddings.weight"};
  if (canonical == "model.embed_positions.weight") return {"embeddings.position_embeddings.weight"};
  if (canonical == "model.embed_token_types.weight") return {"embeddings.token_type_embeddings.weight"};
  if (canonical.rfind("model.embed_norm.", 0) == 0) return {"embeddings.LayerNorm." + canonical.substr(17)};
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string b = fmt::format("encoder.layer.{}.", l);
  if (const auto p = qkv_name(rest)) {
    const char* which = p->part == 0 ? "query" : p->part == 1 ? "key" : "value";
    return {b + "attention.self." + which + "." + p->what};
  }
  auto tail = [&](const std::string& prefix) { return rest.substr(prefix.size()); };
  if (rest.rfind("self_attn.o_proj.", 0) == 0) return {b + "attention.output.dense." + tail("self_attn.o_proj.")};
  // Post-norm: the attention block's LayerNorm, then the MLP block's.
  if (rest.rfind("input_layernorm.", 0) == 0) return {b + "attention.output.LayerNorm." + tail("input_layernorm.")};
  if (rest.rfind("post_attention_layernorm.", 0) == 0) return {b + "output.LayerNorm." + tail("post_attention_layernorm.")};
  if (rest.rfind("mlp.fc1.", 0) == 0) return {b + "intermediate.dense." + tail("mlp.fc1.")};
  if (rest.rfind("mlp.fc2.", 0) == 0) return {b + "output.dense." + tail("mlp.fc2.")};
  return {canonical};
}

// The first of `renames` (a canonical name's prefix -> the checkpoint's, under `base`)
// that `rest` starts with, or nullopt.
std::optional<TensorRef> renamed_any(const std::string& rest, const std::string& base,
                                     std::initializer_list<std::pair<const char*, const char*>> renames) {
  for (const auto& [from, to] : renames)
    if (auto r = renamed(rest, from, base + to)) return r;
  return std::nullopt;
}

// ModernBERT (ModernBertModel; "model." under ModernBertForMaskedLM): embeddings.
// {tok_embeddings, norm}, layers.<l>.{attn_norm (none in layer 0), attn.Wqkv (q, k and v
// rows in turn), attn.Wo, mlp_norm, mlp.Wi (the activated half, then the gate: our gate
// and up), mlp.Wo}, final_norm.
TensorRef modernbert(const std::string& canonical, const Architecture& a) {
  if (canonical == "model.embed_tokens.weight") return {"embeddings.tok_embeddings.weight"};
  if (canonical.rfind("model.embed_norm.", 0) == 0) return {"embeddings.norm." + canonical.substr(17)};
  if (canonical.rfind("model.norm.", 0) == 0) return {"final_norm." + canonical.substr(11)};
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string b = fmt::format("layers.{}.", l);
  const int64_t n = a.hidden_size;
  if (const auto p = qkv_name(rest)) return {b + "attn.Wqkv." + p->what, p->part * n, 3 * n};
  if (auto r = fused_gate_up(rest, b, a.intermediate_size, "mlp.Wi")) return *r;
  if (auto r = renamed_any(rest, b,
                           {{"self_attn.o_proj.", "attn.Wo."},
                            {"input_layernorm.", "attn_norm."},
                            {"post_attention_layernorm.", "mlp_norm."},
                            {"mlp.down_proj.", "mlp.Wo."}}))
    return *r;
  return {canonical};
}

// A vision encoder's front (core/spec/families/vision.h) under HF's `embeddings.` names:
// ViT's and DINOv2's `patch` ("patch_embeddings.projection"), `positions`
// ("position_embeddings", [1, tokens, H]) and cls_token; SigLIP's patch_embedding and
// position_embedding (an Embedding's [tokens, H]).
std::optional<TensorRef> vision_front(const std::string& canonical, const std::string& patch,
                                      const std::string& positions) {
  auto reshaped = [](std::string name) {
    TensorRef r{std::move(name)};
    r.reshaped = true;
    return r;
  };
  if (canonical == "model.patch_embed.weight") return reshaped("embeddings." + patch + ".weight");
  if (canonical == "model.patch_embed.bias") return TensorRef{"embeddings." + patch + ".bias"};
  if (canonical == "model.class_token") return reshaped("embeddings.cls_token");
  if (canonical == "model.embed_positions.weight") return reshaped("embeddings." + positions);
  return std::nullopt;
}

// ViT (ViTModel; "vit." under ViTForImageClassification): encoder.layer.<l>.
// {layernorm_before, attention.attention.{query,key,value}, attention.output.dense,
// layernorm_after, intermediate.dense, output.dense}, the final `layernorm`.
TensorRef vit(const std::string& canonical, const Architecture&) {
  if (auto r = vision_front(canonical, "patch_embeddings.projection", "position_embeddings")) return *r;
  if (auto r = renamed(canonical, "model.norm.", "layernorm.")) return *r;
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string b = fmt::format("encoder.layer.{}.", l);
  if (const auto p = qkv_name(rest)) {
    const char* which = p->part == 0 ? "query" : p->part == 1 ? "key" : "value";
    return {b + "attention.attention." + which + "." + p->what};
  }
  if (auto r = renamed_any(rest, b,
                           {{"self_attn.o_proj.", "attention.output.dense."},
                            {"input_layernorm.", "layernorm_before."},
                            {"post_attention_layernorm.", "layernorm_after."},
                            {"mlp.fc1.", "intermediate.dense."},
                            {"mlp.fc2.", "output.dense."}}))
    return *r;
  return {canonical};
}

// DINOv2 (Dinov2Model): ViT's embeddings and attention names; norm1, norm2, mlp.fc1,
// mlp.fc2, and LayerScale's layer_scale1.lambda1 / layer_scale2.lambda1.
TensorRef dinov2(const std::string& canonical, const Architecture& a) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return vit(canonical, a);
  const std::string b = fmt::format("encoder.layer.{}.", l);
  if (auto r = renamed_any(rest, b,
                           {{"input_layernorm.", "norm1."}, {"post_attention_layernorm.", "norm2."}, {"mlp.", "mlp."}}))
    return *r;
  if (rest == "attn_layer_scale.weight") return {b + "layer_scale1.lambda1"};
  if (rest == "mlp_layer_scale.weight") return {b + "layer_scale2.lambda1"};
  return vit(canonical, a);
}

// SigLIP's vision tower (SiglipVisionModel, "vision_model."): embeddings.patch_embedding,
// embeddings.position_embedding, encoder.layers.<l>.{layer_norm1, self_attn.{q,k,v,out}_proj,
// layer_norm2, mlp.fc1, mlp.fc2}, post_layernorm (its attention-pooling head is not read).
TensorRef siglip_vision(const std::string& canonical, const Architecture&) {
  if (auto r = vision_front(canonical, "patch_embedding", "position_embedding.weight")) return *r;
  if (auto r = renamed(canonical, "model.norm.", "post_layernorm.")) return *r;
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string b = fmt::format("encoder.layers.{}.", l);
  if (auto r = renamed_any(rest, b,
                           {{"self_attn.o_proj.", "self_attn.out_proj."},
                            {"self_attn.", "self_attn."},
                            {"input_layernorm.", "layer_norm1."},
                            {"post_attention_layernorm.", "layer_norm2."},
                            {"mlp.", "mlp."}}))
    return *r;
  return {canonical};
}

// RoBERTa, XLM-RoBERTa, CamemBERT: BERT's names; position p is row p + 2 (fairseq's
// positions start after the padding id, 1).
TensorRef roberta(const std::string& canonical, const Architecture& a) {
  if (canonical == "model.embed_positions.weight")
    return {"embeddings.position_embeddings.weight", 2, a.max_position_embeddings + 2};
  return bert(canonical, a);
}

// DistilBERT: embeddings.* as BERT's (no token types), transformer.layer.<l>.attention.
// {q,k,v,out}_lin, sa_layer_norm (the attention block's post-norm), ffn.lin1/lin2,
// output_layer_norm.
TensorRef distilbert(const std::string& canonical, const Architecture& a) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return bert(canonical, a);
  const std::string b = fmt::format("transformer.layer.{}.", l);
  if (const auto p = qkv_name(rest)) return {b + "attention." + "qkv"[p->part] + "_lin." + p->what};
  if (auto r = renamed(rest, "self_attn.o_proj.", b + "attention.out_lin.")) return *r;
  if (auto r = renamed(rest, "input_layernorm.", b + "sa_layer_norm.")) return *r;
  if (auto r = renamed(rest, "post_attention_layernorm.", b + "output_layer_norm.")) return *r;
  if (auto r = renamed(rest, "mlp.fc1.", b + "ffn.lin1.")) return *r;
  if (auto r = renamed(rest, "mlp.fc2.", b + "ffn.lin2.")) return *r;
  return {canonical};
}

// Llama names but for the ungated MLP's two projections, `up` and `down` ("mlp.c_fc." /
// "mlp.c_proj.": StarCoder2; "mlp.up_proj." / "mlp.down_proj.": Arcee, Nemotron).
TensorRef ungated_names(const std::string& canonical, const char* up, const char* down) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string base = fmt::format("model.layers.{}.", l);
  if (auto r = renamed(rest, "mlp.fc1.", base + up)) return *r;
  if (auto r = renamed(rest, "mlp.fc2.", base + down)) return *r;
  return {canonical};
}

TensorRef up_down(const std::string& canonical, const Architecture&) {
  return ungated_names(canonical, "mlp.up_proj.", "mlp.down_proj.");
}

TensorRef starcoder2(const std::string& canonical, const Architecture&) {
  return ungated_names(canonical, "mlp.c_fc.", "mlp.c_proj.");
}

// The top-level names GPT-2's descendants share (under an optional transformer. prefix):
// the token embedding `embed`, learned positions wpe, the final norm ln_f and lm_head as
// stored; nullopt for any other name (a layer's).
std::optional<TensorRef> gpt_top(const std::string& canonical, const char* embed = "wte.weight") {
  if (canonical == "model.embed_tokens.weight") return TensorRef{embed};
  if (canonical == "model.embed_positions.weight") return TensorRef{"wpe.weight"};
  if (auto r = renamed(canonical, "model.norm.", "ln_f.")) return r;
  if (canonical.rfind("lm_head.", 0) == 0) return TensorRef{canonical};
  return std::nullopt;
}

// OPT's layer names (BART's): self_attn.{q,k,v,out}_proj, self_attn_layer_norm, fc1,
// fc2 and final_layer_norm (the MLP's norm), under `base`.
TensorRef bart_layer(const std::string& rest, const std::string& base) {
  if (auto r = renamed(rest, "self_attn.o_proj.", base + "self_attn.out_proj.")) return *r;
  if (auto r = renamed(rest, "input_layernorm.", base + "self_attn_layer_norm.")) return *r;
  if (auto r = renamed(rest, "post_attention_layernorm.", base + "final_layer_norm.")) return *r;
  if (auto r = renamed(rest, "mlp.fc1.", base + "fc1.")) return *r;
  if (auto r = renamed(rest, "mlp.fc2.", base + "fc2.")) return *r;
  return {base + rest};
}

// A BART-style decoder under `prefix` (its layers at <prefix>layers.<l>.): learned
// positions stored with an offset of 2 rows, the final norm `final_norm`, the LM head
// `head`.
TensorRef bart_decoder(const std::string& canonical, const Architecture& a, const std::string& prefix,
                       const std::string& final_norm, const std::string& head) {
  if (canonical == "model.embed_tokens.weight") return {prefix + "embed_tokens.weight"};
  if (canonical == "model.embed_positions.weight")
    return {prefix + "embed_positions.weight", 2, a.max_position_embeddings + 2};
  if (canonical == "lm_head.weight") return {head};
  if (auto r = renamed(canonical, "model.norm.", prefix + final_norm)) return *r;
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  return bart_layer(rest, fmt::format("{}layers.{}.", prefix, l));
}

// OPT (OPTForCausalLM): model.decoder.* (OPTLearnedPositionalEmbedding's offset), the
// final norm decoder.final_layer_norm, lm_head.
TensorRef opt(const std::string& canonical, const Architecture& a) {
  return bart_decoder(canonical, a, "decoder.", "final_layer_norm.", "lm_head.weight");
}

// BioGPT (BioGptForCausalLM): biogpt.* with OPT's layer names and position offset, the
// final norm biogpt.layer_norm, the LM head output_projection.
TensorRef biogpt(const std::string& canonical, const Architecture& a) {
  return bart_decoder(canonical, a, "biogpt.", "layer_norm.", "output_projection.weight");
}

// GPT-Neo: GPT-2's names (wte, wpe, h.<l>.ln_1/ln_2, mlp.c_fc/c_proj, ln_f) with Linear
// weights, the attention under attn.attention (q/k/v_proj, out_proj).
TensorRef gpt_neo(const std::string& canonical, const Architecture&) {
  if (auto r = gpt_top(canonical)) return *r;
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string h = fmt::format("h.{}.", l);
  if (auto r = renamed(rest, "self_attn.o_proj.", h + "attn.attention.out_proj.")) return *r;
  if (auto r = renamed(rest, "self_attn.", h + "attn.attention.")) return *r;  // q/k/v_proj
  if (auto r = renamed(rest, "input_layernorm.", h + "ln_1.")) return *r;
  if (auto r = renamed(rest, "post_attention_layernorm.", h + "ln_2.")) return *r;
  if (auto r = renamed(rest, "mlp.fc1.", h + "mlp.c_fc.")) return *r;
  if (auto r = renamed(rest, "mlp.fc2.", h + "mlp.c_proj.")) return *r;
  return {h + rest};
}

// Falcon: transformer.word_embeddings, h.<l>.self_attention.query_key_value (grouped by
// kv head: grouped_qkv), self_attention.dense, mlp.dense_h_to_4h / dense_4h_to_h; the
// norms input_layernorm (+ post_attention_layernorm when sequential), or ln_attn and
// ln_mlp when two parallel norms; ln_f.
TensorRef falcon(const std::string& canonical, const Architecture& a) {
  if (auto r = gpt_top(canonical, "word_embeddings.weight")) return *r;
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string h = fmt::format("h.{}.", l);
  if (const auto p = qkv_name(rest))
    return grouped_qkv(h + "self_attention.query_key_value." + p->what, p->part, a.head_dim, a.num_attention_heads,
                       a.num_key_value_heads);
  if (auto r = renamed(rest, "self_attn.o_proj.", h + "self_attention.dense.")) return *r;
  if (auto r = renamed(rest, "mlp.fc1.", h + "mlp.dense_h_to_4h.")) return *r;
  if (auto r = renamed(rest, "mlp.fc2.", h + "mlp.dense_4h_to_h.")) return *r;
  if (a.norm.placement == spec::NormPlacement::kParallel) {
    if (auto r = renamed(rest, "input_layernorm.", h + "ln_attn.")) return *r;
    if (auto r = renamed(rest, "post_attention_layernorm.", h + "ln_mlp.")) return *r;
  }
  return {h + rest};
}

// GPT-NeoX: gpt_neox.*, q/k/v interleaved per head in query_key_value ([heads, 3,
// head_dim] rows), embed_out as the LM head.
TensorRef gpt_neox(const std::string& canonical, const Architecture& a) {
  if (canonical == "model.embed_tokens.weight") return {"gpt_neox.embed_in.weight"};
  if (canonical == "lm_head.weight") return {"embed_out.weight"};
  if (auto r = renamed(canonical, "model.norm.", "gpt_neox.final_layer_norm.")) return *r;
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string base = fmt::format("gpt_neox.layers.{}.", l);
  if (const auto p = qkv_name(rest))
    return per_head_qkv(base + "attention.query_key_value." + p->what, p->part, a.head_dim, a.num_attention_heads);
  if (auto r = renamed(rest, "self_attn.o_proj.", base + "attention.dense.")) return *r;
  if (auto r = renamed(rest, "mlp.fc1.", base + "mlp.dense_h_to_4h.")) return *r;
  if (auto r = renamed(rest, "mlp.fc2.", base + "mlp.dense_4h_to_h.")) return *r;
  return {base + rest};  // input_layernorm, post_attention_layernorm
}

// GPT-BigCode (SantaCoder, StarCoder 1): GPT-2's names with Linear weights (not
// transposed). c_attn holds q, then k, then v rows under multi-query (one kv head);
// with as many kv heads as heads, each head's [q, k, v] rows in turn (as GPT-NeoX).
TensorRef gpt_bigcode(const std::string& canonical, const Architecture& a) {
  if (auto r = gpt_top(canonical)) return *r;
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string h = fmt::format("h.{}.", l);
  if (const auto p = qkv_name(rest)) {
    const int64_t d = a.head_dim, heads = a.num_attention_heads;
    const std::string name = h + "attn.c_attn." + p->what;
    if (a.num_key_value_heads == heads && heads > 1) return per_head_qkv(name, p->part, d, heads);
    const int64_t q = heads * d, kv = a.num_key_value_heads * d;
    return {name, p->part == 0 ? 0 : p->part == 1 ? q : q + kv, q + 2 * kv};
  }
  if (auto r = renamed(rest, "self_attn.o_proj.", h + "attn.c_proj.")) return *r;
  if (auto r = renamed(rest, "mlp.fc1.", h + "mlp.c_fc.")) return *r;
  if (auto r = renamed(rest, "mlp.fc2.", h + "mlp.c_proj.")) return *r;
  if (auto r = renamed(rest, "input_layernorm.", h + "ln_1.")) return *r;
  if (auto r = renamed(rest, "post_attention_layernorm.", h + "ln_2.")) return *r;
  return {h + rest};
}

// Phi (1/1.5/2): Llama names but for self_attn.dense, mlp.fc1/fc2 (as ours) and the
// final norm, model.final_layernorm.
TensorRef phi(const std::string& canonical, const Architecture&) {
  if (auto r = renamed(canonical, "model.norm.", "model.final_layernorm.")) return *r;
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string base = fmt::format("model.layers.{}.", l);
  if (auto r = renamed(rest, "self_attn.o_proj.", base + "self_attn.dense.")) return *r;
  if (auto r = renamed(rest, "self_attn.q_norm.", base + "self_attn.q_layernorm.")) return *r;
  if (auto r = renamed(rest, "self_attn.k_norm.", base + "self_attn.k_layernorm.")) return *r;
  return {canonical};
}

// Persimmon: model.* with GPT-NeoX's per-head query_key_value ([heads, 3, head_dim]
// rows) under self_attn, self_attn.dense, q/k_layernorm, the MLP's dense_h_to_4h /
// dense_4h_to_h, final_layernorm.
TensorRef persimmon(const std::string& canonical, const Architecture& a) {
  if (auto r = renamed(canonical, "model.norm.", "model.final_layernorm.")) return *r;
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string base = fmt::format("model.layers.{}.", l);
  if (const auto p = qkv_name(rest))
    return per_head_qkv(base + "self_attn.query_key_value." + p->what, p->part, a.head_dim, a.num_attention_heads);
  if (auto r = renamed(rest, "self_attn.o_proj.", base + "self_attn.dense.")) return *r;
  if (auto r = renamed(rest, "self_attn.q_norm.", base + "self_attn.q_layernorm.")) return *r;
  if (auto r = renamed(rest, "self_attn.k_norm.", base + "self_attn.k_layernorm.")) return *r;
  if (auto r = renamed(rest, "mlp.fc1.", base + "mlp.dense_h_to_4h.")) return *r;
  if (auto r = renamed(rest, "mlp.fc2.", base + "mlp.dense_4h_to_h.")) return *r;
  return {canonical};  // input_layernorm, post_attention_layernorm
}

// StableLM: Llama's names, but qk_layernorm's per-head LayerNorms are one module each,
// self_attn.q_layernorm.norms.<h>.weight (no bias), read as the rows of the
// [heads, head_dim] weight.
TensorRef stablelm(const std::string& canonical, const Architecture&) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  for (const char* which : {"q", "k"})
    if (rest == fmt::format("self_attn.{}_norm.weight", which)) {
      TensorRef r{fmt::format("model.layers.{}.self_attn.{}_layernorm.norms.{{}}.weight", l, which)};
      r.per_row = true;
      return r;
    }
  return {canonical};
}

// GPT-J: transformer.h.<l>.*, ln_1 the one layer norm, mlp.fc_in / fc_out.
TensorRef gptj(const std::string& canonical, const Architecture&) {
  if (auto r = gpt_top(canonical)) return *r;  // no positions are asked for: rope
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string h = fmt::format("h.{}.", l);
  if (auto r = renamed(rest, "self_attn.o_proj.", h + "attn.out_proj.")) return *r;
  if (auto r = renamed(rest, "self_attn.", h + "attn.")) return *r;  // q/k/v_proj
  if (auto r = renamed(rest, "input_layernorm.", h + "ln_1.")) return *r;
  if (auto r = renamed(rest, "mlp.fc1.", h + "mlp.fc_in.")) return *r;
  if (auto r = renamed(rest, "mlp.fc2.", h + "mlp.fc_out.")) return *r;
  return {h + rest};
}

// GLM and GLM-4: Llama's names but the fused gate_up_proj; GLM-4's four norms are
// input_layernorm, post_self_attn_layernorm (the attention output's), post_attention_layernorm
// (the MLP input's) and post_mlp_layernorm, which are, in the sandwich form's canonical
// names, input, post-attention, pre-feedforward and post-feedforward.
TensorRef glm(const std::string& canonical, const Architecture& a) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string base = fmt::format("model.layers.{}.", l);
  if (auto r = fused_gate_up(rest, base, a.intermediate_size)) return *r;
  if (a.norm.placement == spec::NormPlacement::kSandwich) {
    if (auto r = renamed(rest, "post_attention_layernorm.", base + "post_self_attn_layernorm.")) return *r;
    if (auto r = renamed(rest, "pre_feedforward_layernorm.", base + "post_attention_layernorm.")) return *r;
    if (auto r = renamed(rest, "post_feedforward_layernorm.", base + "post_mlp_layernorm.")) return *r;
  }
  return {canonical};
}

// GraniteMoe / GraniteMoeShared / GraniteMoeHybrid: the experts stacked in
// block_sparse_moe.input_linear ([experts, 2 x intermediate, hidden], each expert's gate
// rows first) and output_linear ([experts, hidden, intermediate]); the router is
// block_sparse_moe.router.layer; the shared expert's gate and up are the halves of
// shared_mlp.input_linear. Without experts (GraniteMoeHybrid's num_local_experts 0) the
// shared MLP is the layer's MLP. GraniteMoeHybrid's Mamba layers (mamba.*) are canonical.
TensorRef granitemoe(const std::string& canonical, const Architecture& a) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string base = fmt::format("model.layers.{}.", l);
  const int64_t e = a.moe.num_experts, im = a.moe.moe_intermediate_size, h = a.hidden_size;
  if (rest == "mlp.gate.weight") return {base + "block_sparse_moe.router.layer.weight"};
  static const std::regex expert(R"(^mlp\.experts\.(\d+)\.(gate|up|down)_proj\.weight$)");
  std::smatch m;
  if (std::regex_match(rest, m, expert)) {
    const int64_t x = std::stoll(m[1].str());
    TensorRef ref;
    if (m[2].str() == "down") {
      ref = {base + "block_sparse_moe.output_linear.weight", x * h, e * h};
    } else {
      ref = {base + "block_sparse_moe.input_linear.weight", x * 2 * im + (m[2].str() == "up" ? im : 0), e * 2 * im};
    }
    ref.stack = e;
    return ref;
  }
  if (a.moe.num_experts == 0) {
    const int64_t i = a.intermediate_size;
    if (rest == "mlp.gate_proj.weight") return {base + "shared_mlp.input_linear.weight", 0, 2 * i};
    if (rest == "mlp.up_proj.weight") return {base + "shared_mlp.input_linear.weight", i, 2 * i};
    if (rest == "mlp.down_proj.weight") return {base + "shared_mlp.output_linear.weight"};
  }
  const int64_t s = a.moe.shared_intermediate_size;
  if (rest == "mlp.shared_expert.gate_proj.weight") return {base + "shared_mlp.input_linear.weight", 0, 2 * s};
  if (rest == "mlp.shared_expert.up_proj.weight") return {base + "shared_mlp.input_linear.weight", s, 2 * s};
  if (rest == "mlp.shared_expert.down_proj.weight") return {base + "shared_mlp.output_linear.weight"};
  return {canonical};
}

// gpt-oss: the router is mlp.router (weight and bias); the experts are stacked and
// stored [experts, in, out]: mlp.experts.gate_up_proj [E, H, 2 I] with each expert's gate
// and up columns interleaved (gate j at 2 j, up j at 2 j + 1), gate_up_proj_bias [E, 2 I]
// likewise, down_proj [E, I, H] and down_proj_bias [E, H]. Attention (q/k/v/o with
// biases, self_attn.sinks) and the norms keep Llama's names.
TensorRef gpt_oss(const std::string& canonical, const Architecture& a) {
  int64_t l = 0;
  std::string rest;
  if (!split_layer(canonical, &l, &rest)) return {canonical};
  const std::string base = fmt::format("model.layers.{}.", l);
  const int64_t e = a.moe.num_experts, im = a.moe.moe_intermediate_size, h = a.hidden_size;
  if (auto r = renamed(rest, "mlp.gate.", base + "mlp.router.")) return *r;
  static const std::regex expert(R"(^mlp\.experts\.(\d+)\.(gate|up|down)_proj\.(weight|bias)$)");
  std::smatch m;
  if (!std::regex_match(rest, m, expert)) return {base + rest};
  const int64_t x = std::stoll(m[1].str());
  const bool bias = m[3].str() == "bias";
  TensorRef ref;
  ref.stack = e;
  ref.transpose = !bias;
  if (m[2].str() == "down") {
    ref.name = base + (bias ? "mlp.experts.down_proj_bias" : "mlp.experts.down_proj");
    ref.offset = x * h;
    ref.total = e * h;
  } else {
    ref.name = base + (bias ? "mlp.experts.gate_up_proj_bias" : "mlp.experts.gate_up_proj");
    ref.offset = x * 2 * im + (m[2].str() == "up" ? 1 : 0);
    ref.total = e * 2 * im;
    ref.group = 1;
    ref.stride = 2;
  }
  return ref;
}

}  // namespace

std::vector<std::string> hf_supported_model_types() {
  return {"llama",
          "mistral",
          "qwen2",
          "qwen3",
          "qwen3_moe",
          "mixtral",
          "gemma",
          "gemma2",
          "gemma3_text",
          "phi3",
          "bert",
          "gpt2",
          "starcoder2",
          "opt",
          "gpt_neox",
          "phi",
          "gptj",
          "granite",
          "cohere",
          "qwen2_moe",
          "olmo2",
          "stablelm",
          "gpt_bigcode",
          "olmo",
          "olmoe",
          "helium",
          "seed_oss",
          "glm",
          "glm4",
          "granitemoe",
          "granitemoeshared",
          "gpt_oss",
          "falcon",
          "gpt_neo",
          "biogpt",
          "roberta",
          "xlm-roberta",
          "camembert",
          "electra",
          "distilbert",
          "arcee",
          "nemotron",
          "smollm3",
          "cohere2",
          "persimmon",
          "deepseek_v3",
          "deepseek_v2",
          "jamba",
          "bamba",
          "granitemoehybrid",
          "vit",
          "dinov2",
          "siglip_vision_model",
          "modernbert"};
}

TensorMap hf_tensor_map(const std::string& model_type) {
  if (model_type == "llama" || model_type == "mistral" || model_type == "qwen2" || model_type == "qwen3" ||
      model_type == "qwen3_moe" || model_type == "gemma" || model_type == "gemma2" || model_type == "gemma3_text" ||
      model_type == "granite" || model_type == "cohere" || model_type == "qwen2_moe" || model_type == "olmo2" ||
      model_type == "olmo" || model_type == "olmoe" || model_type == "helium" || model_type == "seed_oss" ||
      model_type == "smollm3" || model_type == "cohere2")
    return {model_type, {""}, same};
  if (model_type == "glm" || model_type == "glm4") return {model_type, {""}, glm};
  if (model_type == "granitemoe" || model_type == "granitemoeshared" || model_type == "granitemoehybrid")
    return {model_type, {""}, granitemoe};
  if (model_type == "gpt_oss") return {model_type, {""}, gpt_oss};
  if (model_type == "deepseek_v3" || model_type == "deepseek_v2") return {model_type, {""}, deepseek};
  if (model_type == "jamba" || model_type == "bamba") return {model_type, {""}, jamba};
  if (model_type == "starcoder2") return {model_type, {""}, starcoder2};
  if (model_type == "arcee" || model_type == "nemotron") return {model_type, {""}, up_down};
  if (model_type == "opt") return {model_type, {"model.", ""}, opt};
  if (model_type == "biogpt") return {model_type, {""}, biogpt};
  if (model_type == "gpt_neo") return {model_type, {"transformer.", ""}, gpt_neo};
  if (model_type == "falcon") return {model_type, {"transformer.", ""}, falcon};
  if (model_type == "gpt_neox") return {model_type, {""}, gpt_neox};
  if (model_type == "phi") return {model_type, {""}, phi};
  if (model_type == "persimmon") return {model_type, {""}, persimmon};
  if (model_type == "stablelm") return {model_type, {""}, stablelm};
  if (model_type == "gptj") return {model_type, {"transformer.", ""}, gptj};
  if (model_type == "gpt_bigcode") return {model_type, {"transformer.", ""}, gpt_bigcode};
  // Gemma 3 multimodal checkpoints keep the text model under language_model.
  if (model_type == "gemma3") return {model_type, {"", "language_model."}, same};
  if (model_type == "mixtral") return {model_type, {""}, mixtral};
  if (model_type == "phi3") return {model_type, {""}, phi3};
  if (model_type == "gpt2") return {model_type, {"transformer.", ""}, gpt2};
  if (model_type == "bert") return {model_type, {"", "bert."}, bert};
  // XLM-RoBERTa and CamemBERT keep RoBERTa's module prefix.
  if (model_type == "roberta" || model_type == "xlm-roberta" || model_type == "camembert")
    return {model_type, {"", "roberta."}, roberta};
  if (model_type == "electra") return {model_type, {"", "electra."}, bert};
  if (model_type == "distilbert") return {model_type, {"", "distilbert."}, distilbert};
  if (model_type == "vit") return {model_type, {"", "vit."}, vit};
  if (model_type == "dinov2") return {model_type, {"", "dinov2."}, dinov2};
  if (model_type == "siglip_vision_model") return {model_type, {"vision_model.", ""}, siglip_vision};
  if (model_type == "modernbert") return {model_type, {"", "model."}, modernbert};
  fail(ErrorKind::kUnsupported, "no checkpoint mapping for model_type '{}' (supported: {})", model_type,
       fmt::join(hf_supported_model_types(), ", "));
}

}  // namespace fk::runner
