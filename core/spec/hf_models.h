// The per-model_type mappings of `fk import-hf` (internal to hf_config*.cc).
//
// Each supported model_type is one entry: its transformers config class, its family,
// and a fill function that reads the config's keys (through a ConfigReader, which
// records class defaults and rejects unread keys) into an Architecture. The pieces
// several models share (sizes, rope, layer patterns, activations) are the helpers
// below (hf_common.cc); hf_config.cc owns the driver (JSON, gemma3's text_config,
// dtype, name, source, validation).
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/hf_config_reader.h"

#include <optional>
#include <string>
#include <vector>

namespace fk::spec::hf {

struct ModelImporter {
  const char* model_type;
  const char* config_class;  // the transformers class whose defaults fill absent keys
  const char* family;
  void (*fill)(ConfigReader& r, Architecture& a);
};

// Every supported model_type except the "gemma3" wrapper (hf_models.cc).
const std::vector<ModelImporter>& model_importers();
const ModelImporter* find_importer(const std::string& model_type);
// What a known model_type needs that fk import-hf lacks (nullptr: not a known one).
const char* unsupported_reason(const std::string& model_type);

// Keys of every config that never change the forward pass (token ids, dropouts,
// generation settings, bookkeeping), and keys that must be inert when present
// (quantization_config, pruned_heads, ...).
void ignore_common(ConfigReader& r);

// Class defaults of a decoder's keys that differ between model types (written with
// designated initialisers in hf_models*.cc, so each reads like the config class).
struct DecoderDefaults {
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false;
  std::optional<int64_t> num_key_value_heads = std::nullopt;  // nullopt: = num_attention_heads
  std::optional<int64_t> head_dim = std::nullopt;             // nullopt: hidden_size / num_attention_heads
  std::optional<int64_t> vocab_size = std::nullopt;           // nullopt: required
  const char* hidden_act_key = "hidden_act";
  const char* hidden_act = "silu";
  const char* norm_eps_key = "rms_norm_eps";  // nullptr: no key, rms_norm_eps is fixed
};

// hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim,
// intermediate_size, vocab_size, max_position_embeddings, rms_norm_eps, the MLP
// activation and tie_word_embeddings of a pre-RMSNorm gated-MLP decoder; rope is read
// separately (read_rope).
void read_decoder_core(ConfigReader& r, Architecture& a, const DecoderDefaults& d);

// intermediate_size from `key` (null or absent: 4 x hidden_size, as GPT-2's and GPT-J's
// n_inner, GPT-Neo's intermediate_size, Falcon's ffn_hidden_size, DistilBERT's hidden_dim).
// `hidden_key` names the hidden size's key in the note of the default.
void read_inner_or_4x(ConfigReader& r, Architecture& a, const char* key, const char* hidden_key);

// Checks kv heads and head_dim against the heads (errors name the HF keys given).
void check_heads(ConfigReader& r, const Architecture& a, const char* heads_key, const char* kv_key);

// An HF activation name as the spec's: silu/swish, gelu (erf), gelu_new /
// gelu_pytorch_tanh (tanh approximation), relu; anything else is an error on `key`.
Activation activation_from(ConfigReader& r, const std::string& key, const std::string& name);

// Rope as the config gives it: 5.x rope_parameters (one dict, or one per layer type)
// or 4.x rope_theta + rope_scaling. partial_rotary_factor may sit at the top level
// (4.x) or in the dict (5.x).
struct RopeRead {
  double theta = 10000.0;
  RopeScaling scaling;
  double partial_rotary_factor = 1.0;
  bool keyed = false;                   // rope_parameters keyed by layer type
  bool has_full = false;                // keyed: a full_attention entry
  std::optional<double> sliding_theta;  // keyed: the sliding_attention entry's theta
};
RopeRead read_rope(ConfigReader& r, double default_theta);

// Sets a.position (kind rope, neox) from `rope` for the layer kinds of `a`.
// `local_theta`: theta of sliding layers when the model gives them their own unscaled
// rope (Gemma 3); with keyed rope parameters it comes from the sliding entry.
// `partial_allowed`: whether the model honours partial_rotary_factor (else != 1 fails).
void apply_rope(ConfigReader& r, Architecture& a, const RopeRead& rope, std::optional<double> local_theta,
                bool partial_allowed);

// Rope on the first part of each head: rope_parameters / partial_rotary_factor when the
// config gives a fraction, else the config class's `default_fraction` (recorded).
void partial_rope(ConfigReader& r, Architecture& a, double default_fraction, double default_theta = 10000.0);

// 5.x per-layer `layer_types` ("full_attention" / "sliding_attention"), checked against
// num_hidden_layers; nullopt when absent or null.
std::optional<std::vector<LayerType>> read_layer_types(ConfigReader& r, int64_t layers);

// Sets attention.layer_types (the shortest repeating pattern of `per_layer`) and
// attention.sliding_window (`window` when some layer slides, else unset; a sliding
// layer without a window is an error on `window_key`).
void set_layer_pattern(ConfigReader& r, Architecture& a, const std::vector<LayerType>& per_layer,
                       std::optional<int64_t> window, const char* window_key);

// Sets position.rope_layers to the shortest repeating pattern of `per_layer` (true: the
// layer has rope), left empty when every layer has rope.
void set_rope_layers(Architecture& a, const std::vector<bool>& per_layer);

// sliding_window with the class default `def` when absent (recorded); null -> none.
std::optional<int64_t> read_window(ConfigReader& r, std::optional<int64_t> def);

// Every layer of one kind.
std::vector<LayerType> uniform(int64_t layers, LayerType t);
// Layer i slides when i is even, else attends to all (Gemma 2's and gpt-oss' default).
std::vector<LayerType> even_layers_slide(int64_t layers);

// Granite's muP scales (Granite, GraniteMoe, GraniteMoeShared): attention_multiplier is
// the softmax scale itself (default 1.0), embedding_multiplier and residual_multiplier
// multiply the embeddings and each branch, the logits are divided by logits_scaling.
void read_granite_scales(ConfigReader& r, Architecture& a);

// The fill functions of the registry (hf_models.cc, hf_models_gemma.cc,
// hf_models_classic.cc, hf_models_parallel.cc, hf_models_mamba.cc).
void fill_llama(ConfigReader& r, Architecture& a);
void fill_mistral(ConfigReader& r, Architecture& a);
void fill_mixtral(ConfigReader& r, Architecture& a);
void fill_qwen2(ConfigReader& r, Architecture& a);
void fill_qwen3(ConfigReader& r, Architecture& a);
void fill_qwen3_moe(ConfigReader& r, Architecture& a);
void fill_phi3(ConfigReader& r, Architecture& a);
void fill_gemma2(ConfigReader& r, Architecture& a);
void fill_gemma3_text(ConfigReader& r, Architecture& a);
void fill_bert(ConfigReader& r, Architecture& a);
void fill_vit(ConfigReader& r, Architecture& a);
void fill_dinov2(ConfigReader& r, Architecture& a);
void fill_siglip_vision(ConfigReader& r, Architecture& a);
void fill_modernbert(ConfigReader& r, Architecture& a);
void fill_convnext(ConfigReader& r, Architecture& a);
void fill_convnextv2(ConfigReader& r, Architecture& a);
void fill_gpt2(ConfigReader& r, Architecture& a);
void fill_mamba(ConfigReader& r, Architecture& a);
void fill_mamba2(ConfigReader& r, Architecture& a);
void fill_jamba(ConfigReader& r, Architecture& a);
void fill_bamba(ConfigReader& r, Architecture& a);
void fill_granitemoehybrid(ConfigReader& r, Architecture& a);
void fill_deepseek_v2(ConfigReader& r, Architecture& a);
void fill_gemma(ConfigReader& r, Architecture& a);
void fill_opt(ConfigReader& r, Architecture& a);
void fill_starcoder2(ConfigReader& r, Architecture& a);
void fill_gpt_neox(ConfigReader& r, Architecture& a);
void fill_persimmon(ConfigReader& r, Architecture& a);
void fill_phi(ConfigReader& r, Architecture& a);
void fill_gptj(ConfigReader& r, Architecture& a);
void fill_granite(ConfigReader& r, Architecture& a);
void fill_cohere(ConfigReader& r, Architecture& a);
void fill_qwen2_moe(ConfigReader& r, Architecture& a);
void fill_gpt_oss(ConfigReader& r, Architecture& a);
void fill_olmo2(ConfigReader& r, Architecture& a);
void fill_stablelm(ConfigReader& r, Architecture& a);
void fill_gpt_bigcode(ConfigReader& r, Architecture& a);
void fill_roberta(ConfigReader& r, Architecture& a);
void fill_electra(ConfigReader& r, Architecture& a);
void fill_distilbert(ConfigReader& r, Architecture& a);
void fill_falcon(ConfigReader& r, Architecture& a);
void fill_gpt_neo(ConfigReader& r, Architecture& a);
void fill_biogpt(ConfigReader& r, Architecture& a);
void fill_olmo(ConfigReader& r, Architecture& a);
void fill_arcee(ConfigReader& r, Architecture& a);
void fill_smollm3(ConfigReader& r, Architecture& a);
void fill_cohere2(ConfigReader& r, Architecture& a);
void fill_nemotron(ConfigReader& r, Architecture& a);
void fill_olmoe(ConfigReader& r, Architecture& a);
void fill_helium(ConfigReader& r, Architecture& a);
void fill_seed_oss(ConfigReader& r, Architecture& a);
void fill_glm(ConfigReader& r, Architecture& a);
void fill_glm4(ConfigReader& r, Architecture& a);
void fill_granitemoe(ConfigReader& r, Architecture& a);
void fill_granitemoeshared(ConfigReader& r, Architecture& a);
void fill_deepseek_v3(ConfigReader& r, Architecture& a);  // hf_models_deepseek.cc

}  // namespace fk::spec::hf
