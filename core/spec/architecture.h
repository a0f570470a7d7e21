// The architecture spec: everything the model stage needs to build a transformer.
//
// Field names follow HuggingFace config.json where one exists (hidden_size,
// num_key_value_heads, ...); grouped sections describe behaviour config.json leaves
// to the model class (norm placement, gated MLP, rope style). docs/specs.md is the
// reference for every field, its default and its validation rule.
#pragma once

#include "core/dtype.h"
#include "core/spec/diagnostics.h"
#include "core/spec/family_section.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fk::spec {

enum class NormKind { kRmsNorm, kLayerNorm };
// pre: x + f(norm(x)). post (BERT): norm(x + f(x)). sandwich (Gemma 2/3):
// x + post_norm(f(pre_norm(x))). parallel (GPT-NeoX): attention and MLP read the same
// layer input, x + attn(norm_1(x)) + mlp(norm_2(x)); parallel_shared (Phi, GPT-J,
// Falcon): one norm for both, x + attn(norm(x)) + mlp(norm(x)). post_branch (OLMo 2's
// reordered norm): each branch's output is normalised, x + norm(f(x)).
enum class NormPlacement { kPre, kPost, kSandwich, kParallel, kParallelShared, kPostBranch };
enum class Activation { kSilu, kGelu, kGeluTanh, kRelu, kRelu2 };
enum class LayerType { kFull, kSliding };
enum class PositionKind { kRope, kLearned, kNone };
enum class RopeStyle { kNeox, kGptj };
enum class RopeScalingType { kNone, kLinear, kLlama3, kYarn };
enum class HeadKind { kLm, kNone };
enum class MoeScoring { kSoftmax, kSigmoid };

struct AttentionSpec {
  bool causal = true;
  bool qkv_bias = false;
  bool out_bias = false;
  std::optional<int64_t> sliding_window;  // tokens a sliding layer attends to
  // Per-layer kinds, repeated cyclically over the layers. Empty: every layer is
  // sliding when sliding_window is set, else full.
  std::vector<LayerType> layer_types;
  std::optional<double> logit_softcap;          // tanh soft-capping of scores (Gemma 2)
  bool qk_norm = false;                         // RMSNorm over each q/k head (Qwen3, Gemma 3)
  // With qk_norm: one RMSNorm over all of a token's q heads together (and one over its k
  // heads), weights of num_heads x head_dim (OLMo 2), not one per head.
  bool qk_norm_full = false;
  // With qk_norm: each head has its own weight (and bias): weights of num_heads x head_dim
  // for q and num_key_value_heads x head_dim for k (Cohere's use_qk_norm), not one shared.
  bool qk_norm_per_head = false;
  // With qk_norm and norm.kind layernorm: whether the q/k LayerNorms add a bias. Unset:
  // as the model's norms do (norm.bias). StableLM's per-head q/k LayerNorms have none
  // while its other LayerNorms do.
  std::optional<bool> qk_norm_bias;
  std::optional<double> query_pre_attn_scalar;  // scale = 1/sqrt(this) instead of 1/sqrt(head_dim)
  std::optional<double> scale;                  // the softmax scale itself (Granite attention_multiplier)
  // Each layer has a learned score per query head that every query's softmax also counts,
  // with no value (gpt-oss' attention sinks: self_attn.sinks [num_heads]).
  bool sinks = false;
  bool operator==(const AttentionSpec&) const = default;
};

struct NormSpec {
  NormKind kind = NormKind::kRmsNorm;
  double eps = 1e-6;
  NormPlacement placement = NormPlacement::kPre;
  double weight_offset = 0.0;  // RMSNorm scales by (offset + w): Gemma uses 1.0
  bool bias = true;            // LayerNorm adds a bias (false: weight only, Cohere's LayerNorm)
  // The norm scales by a learned weight (false: by 1, no weight read or drawn; OLMo's
  // non-parametric LayerNorm). Applies to the hidden-size norms, not q/k norms.
  bool weight = true;
  // Layer 0's attention branch normalises its input (false: it reads the stream as is,
  // ModernBERT's attn_norm = Identity on the normalised embeddings; pre-LayerNorm only).
  bool first_attention_norm = true;
  // Each residual branch's output is multiplied by this before it joins the stream
  // (Granite residual_multiplier): x + m * f(x).
  std::optional<double> residual_multiplier;
  bool operator==(const NormSpec&) const = default;
};

struct MlpSpec {
  Activation activation = Activation::kSilu;
  bool gated = true;  // act(gate) * up (SwiGLU/GeGLU) vs act(fc1)
  bool bias = false;
  bool operator==(const MlpSpec&) const = default;
};

struct RopeScaling {
  RopeScalingType type = RopeScalingType::kNone;
  double factor = 1.0;
  double low_freq_factor = 1.0;   // llama3
  double high_freq_factor = 4.0;  // llama3
  int64_t original_max_position_embeddings = 0;  // llama3, yarn
  // yarn (YaRN, arXiv 2309.00071, as HF transformers' _compute_yarn_parameters): the
  // rotations bounding the blend of extrapolated and interpolated frequencies, the
  // DeepSeek mscales (0: not set), the cos/sin scale (unset: from factor and the
  // mscales), and whether the blend's ends are rounded to whole dimensions.
  double beta_fast = 32.0, beta_slow = 1.0;
  double mscale = 0.0, mscale_all_dim = 0.0;
  std::optional<double> attention_factor;
  bool truncate = true;
  bool operator==(const RopeScaling&) const = default;
};

struct PositionSpec {
  PositionKind kind = PositionKind::kRope;
  double rope_theta = 10000.0;
  std::optional<double> local_rope_theta;  // theta of sliding layers (Gemma 3)
  RopeStyle rope_style = RopeStyle::kNeox;
  double partial_rotary_factor = 1.0;
  RopeScaling rope_scaling;
  // Per layer, repeated cyclically over the layers: false for a layer without rope
  // (NoPE: SmolLM3's every fourth layer, Cohere 2's full-attention layers). Empty:
  // every layer has rope.
  std::vector<bool> rope_layers;
  bool operator==(const PositionSpec&) const = default;
};

struct EmbeddingSpec {
  bool tied = false;              // LM head shares the token embedding
  bool scale_by_sqrt_hidden = false;  // Gemma: embeddings * sqrt(hidden_size)
  std::optional<double> multiplier;   // embeddings * this (Granite embedding_multiplier)
  int64_t type_vocab_size = 0;    // BERT token-type embeddings
  bool norm = false;              // LayerNorm right after the embeddings (BERT)
  bool operator==(const EmbeddingSpec&) const = default;
};

struct HeadSpec {
  HeadKind kind = HeadKind::kLm;
  bool final_norm = true;
  bool bias = false;                    // the LM head adds a bias (Phi, GPT-J)
  std::optional<double> logit_scale;    // logits x this (Cohere logit_scale; Granite 1 / logits_scaling)
  std::optional<double> logit_softcap;  // final logit soft-capping (Gemma 2)
  bool operator==(const HeadSpec&) const = default;
};

struct MoeSpec {
  int64_t num_experts = 0;  // 0: dense model
  int64_t experts_per_token = 0;
  int64_t moe_intermediate_size = 0;
  bool renormalize = true;  // renormalise the top-k router weights to sum to 1
  int64_t shared_experts = 0;
  int64_t shared_intermediate_size = 0;
  // The shared experts' output is multiplied by sigmoid(x . g) per token, g a [hidden]
  // vector (Qwen2-MoE's shared_expert_gate).
  bool shared_expert_gate = false;
  int64_t first_dense_layers = 0;  // leading layers with a dense MLP
  // Further layers with a dense MLP, anywhere in the stack (HF mlp_only_layers,
  // decoder_sparse_step): ascending, distinct, each < num_hidden_layers.
  std::vector<int64_t> dense_layers = {};
  bool router_bias = false;  // the router adds a bias [E] (gpt-oss)
  // Each routed expert adds biases: to its gate and up products [2 I] and to its output
  // [H] (gpt-oss).
  bool expert_bias = false;
  // Set: the routed experts' SwiGLU is gpt-oss' clamped one, (clamp(up, -l, l) + 1) *
  // g * sigmoid(swiglu_alpha * g) with g = min(gate, l), l = swiglu_limit.
  std::optional<double> swiglu_limit = {};
  double swiglu_alpha = 1.702;
  // DeepSeek's routing (the grouped_topk op): the router scores by softmax or by a
  // sigmoid each (HF scoring_func); the experts fall into n_group groups of which the
  // topk_group best compete (HF n_group, topk_group); with score_correction_bias a
  // learned bias [E] steers the choice but not the weights (HF e_score_correction_bias,
  // topk_method noaux_tc); the top-k weights are multiplied by routed_scaling_factor.
  MoeScoring scoring = MoeScoring::kSoftmax;
  int64_t n_group = 1;
  int64_t topk_group = 1;
  bool score_correction_bias = false;
  double routed_scaling_factor = 1.0;
  bool enabled() const { return num_experts > 0; }
  // Whether the router is grouped_topk's rather than topk_softmax's.
  bool grouped_routing() const {
    return scoring != MoeScoring::kSoftmax || n_group > 1 || score_correction_bias || routed_scaling_factor != 1.0;
  }
  bool operator==(const MoeSpec&) const = default;
};

struct Architecture {
  // Identity and provenance.
  std::string name;
  std::string model_type;
  std::string hf_id;
  std::string family;  // lineage reports group by (llama, mistral, ...)
  std::string source;
  // The plug-in that plans, builds and runs the model (core/spec/family.h,
  // runner/model/family.h).
  std::string model_family = "transformer";
  std::string preset = "full";  // which preset produced these values
  DType dtype = DType::kBF16;
  // Weights: a .safetensors file, or a folder holding model.safetensors or
  // model.safetensors.index.json. Absolute (the loader resolves a relative path
  // against the spec file's folder); "" = none (random weights). Presets never
  // carry it: their sizes differ from the checkpoint's.
  std::string checkpoint;

  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;

  AttentionSpec attention;
  NormSpec norm;
  MlpSpec mlp;
  PositionSpec position;
  EmbeddingSpec embedding;
  HeadSpec head;
  MoeSpec moe;
  // The sections only one model family takes (Mamba's ssm), each the family's own
  // struct (core/spec/family_section.h, core/spec/families/).
  FamilySections sections;

  // Member by member (job files share one entry among equal architectures).
  bool operator==(const Architecture&) const = default;

  // Derived helpers.
  LayerType layer_type(int64_t layer) const;
  // Whether `layer` rotates q and k: position.kind rope and not a NoPE layer.
  bool layer_has_rope(int64_t layer) const;
  // Whether `layer`'s attention branch has an input norm (not layer 0 of a model with
  // norm.first_attention_norm false: ModernBERT).
  bool layer_has_attention_norm(int64_t layer) const;
  bool layer_is_moe(int64_t layer) const;
  int64_t rotary_dim() const;
  double attention_scale() const;
  // Whether the q/k norms (attention.qk_norm) add a bias: LayerNorms with
  // attention.qk_norm_bias, or norm.bias where that is unset.
  bool qk_norm_has_bias() const;
  // "MHA", "GQA" or "MQA".
  std::string attention_kind() const;
};

std::string_view norm_kind_name(NormKind k);
std::string_view norm_placement_name(NormPlacement p);
std::string_view activation_name(Activation a);
std::string_view layer_type_name(LayerType t);
std::string_view position_kind_name(PositionKind k);
std::string_view rope_style_name(RopeStyle s);
// "[rope, nope, ...]" (position.rope_layers as written; "[]" when empty).
std::string rope_layers_text(const std::vector<bool>& layers);
std::string_view rope_scaling_name(RopeScalingType t);
std::string_view head_kind_name(HeadKind k);
std::string_view moe_scoring_name(MoeScoring s);

}  // namespace fk::spec
