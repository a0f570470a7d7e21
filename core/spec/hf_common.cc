// Pieces of the HF config mapping that several model types share: sizes, heads,
// activations, rope (4.x and 5.x forms) and attention layer patterns. Sizes are read
// within the spec's limits (core/spec/limits.h), so the layer count is bounded before
// anything loops over layers.
#include "core/spec/architecture_write.h"
#include "core/spec/hf_models.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fk::spec::hf {

void ignore_common(ConfigReader& r) {
  r.ignore({// identity, token ids and bookkeeping
            "architectures", "auto_map", "transformers_version", "bos_token_id", "eos_token_id", "pad_token_id",
            "sep_token_id", "unk_token_id", "decoder_start_token_id", "tokenizer_class", "prefix",
            "task_specific_params", "finetuning_task", "id2label", "label2id", "num_labels", "problem_type",
            // training only: initialisation, dropout, router losses, checkpointing
            "initializer_range", "initializer_factor", "attention_dropout", "hidden_dropout", "hidden_dropout_prob",
            "attention_probs_dropout_prob", "classifier_dropout", "embd_pdrop", "resid_pdrop", "attn_pdrop",
            "output_router_logits", "router_aux_loss_coef", "router_z_loss_coef", "gradient_checkpointing",
            "tf_legacy_loss", "use_bfloat16",
            // runtime switches and cache policy (same math)
            "use_cache", "cache_implementation", "output_attentions", "output_hidden_states", "return_dict",
            "use_return_dict", "torchscript", "chunk_size_feed_forward", "is_encoder_decoder", "tie_encoder_decoder",
            "xla_device",
            // generation settings some 4.x configs still carry
            "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups",
            "diversity_penalty", "temperature", "top_k", "top_p", "typical_p", "repetition_penalty", "length_penalty",
            "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids", "num_return_sequences",
            "output_scores", "return_dict_in_generate", "forced_bos_token_id", "forced_eos_token_id",
            "remove_invalid_values", "exponential_decay_length_penalty", "suppress_tokens", "begin_suppress_tokens"});
  r.require_inert("quantization_config", "quantized checkpoints are not supported");
  r.require_inert("pruned_heads", "pruned heads change the layer shapes");
  r.require_inert("add_cross_attention", "cross-attention layers are not supported");
}

void read_decoder_core(ConfigReader& r, Architecture& a, const DecoderDefaults& d) {
  a.hidden_size = r.integer("hidden_size", limits::kHiddenSize);
  a.num_hidden_layers = r.integer("num_hidden_layers", limits::kNumHiddenLayers);
  a.num_attention_heads = r.integer("num_attention_heads", limits::kHeads);
  if (const Json* kv = r.get("num_key_value_heads"); kv != nullptr && !kv->is_null()) {
    a.num_key_value_heads = *r.optional_integer("num_key_value_heads", limits::kHeads);
  } else if (d.num_key_value_heads) {
    a.num_key_value_heads = *d.num_key_value_heads;
    r.note_default("num_key_value_heads", std::to_string(a.num_key_value_heads));
  } else {
    a.num_key_value_heads = a.num_attention_heads;
    r.note_default("num_key_value_heads", fmt::format("num_attention_heads ({})", a.num_attention_heads));
  }
  if (const Json* hd = r.get("head_dim"); hd != nullptr && !hd->is_null()) {
    a.head_dim = *r.optional_integer("head_dim", limits::kHeads);
  } else if (d.head_dim) {
    a.head_dim = *d.head_dim;
    r.note_default("head_dim", std::to_string(a.head_dim));
  } else {
    if (a.hidden_size % a.num_attention_heads != 0)
      r.fail("head_dim", fmt::format("missing, and hidden_size ({}) is not divisible by num_attention_heads ({}); "
                                     "expected head_dim in the config",
                                     a.hidden_size, a.num_attention_heads));
    a.head_dim = a.hidden_size / a.num_attention_heads;
    r.note_default("head_dim", fmt::format("hidden_size / num_attention_heads ({})", a.head_dim));
  }
  a.intermediate_size = r.integer("intermediate_size", limits::kIntermediateSize);
  a.vocab_size = d.vocab_size ? r.integer_or("vocab_size", *d.vocab_size, limits::kVocabSize)
                              : r.integer("vocab_size", limits::kVocabSize);
  a.max_position_embeddings =
      r.integer_or("max_position_embeddings", d.max_position_embeddings, limits::kMaxPositionEmbeddings);
  a.norm.kind = NormKind::kRmsNorm;
  // No key (OLMo): the eps is fixed by the model's code.
  a.norm.eps =
      d.norm_eps_key == nullptr ? d.rms_norm_eps : r.number_or(d.norm_eps_key, d.rms_norm_eps, limits::kNormEps);
  a.norm.placement = NormPlacement::kPre;
  a.norm.weight_offset = 0.0;
  a.mlp.activation = activation_from(r, d.hidden_act_key, r.string_or(d.hidden_act_key, d.hidden_act));
  a.mlp.gated = true;
  a.mlp.bias = false;
  a.embedding.tied = r.boolean_or("tie_word_embeddings", d.tie_word_embeddings);
  a.head.kind = HeadKind::kLm;
  a.head.final_norm = true;
  a.attention.causal = true;
}

void read_inner_or_4x(ConfigReader& r, Architecture& a, const char* key, const char* hidden_key) {
  if (const auto inner = r.optional_integer(key, limits::kIntermediateSize)) {
    a.intermediate_size = *inner;
  } else {
    a.intermediate_size = 4 * a.hidden_size;
    r.note_default(key, fmt::format("4 x {} ({})", hidden_key, a.intermediate_size));
  }
}

void check_heads(ConfigReader& r, const Architecture& a, const char* heads_key, const char* kv_key) {
  if (a.num_key_value_heads > a.num_attention_heads || a.num_attention_heads % a.num_key_value_heads != 0)
    r.fail(kv_key, fmt::format("found {}, expected a divisor of {} ({})", a.num_key_value_heads, heads_key,
                               a.num_attention_heads));
}

Activation activation_from(ConfigReader& r, const std::string& key, const std::string& name) {
  if (name == "silu" || name == "swish") return Activation::kSilu;
  if (name == "gelu") return Activation::kGelu;
  // gelu_fast is the same tanh approximation written as x (1 + 0.044715 x^2).
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::kGeluTanh;
  if (name == "relu") return Activation::kRelu;
  if (name == "relu2") return Activation::kRelu2;
  r.fail(key,
         fmt::format("found \"{}\", expected one of \"silu\", \"swish\", \"gelu\", \"gelu_new\", "
                     "\"gelu_pytorch_tanh\", \"gelu_fast\", \"relu\", \"relu2\" (the activations the spec implements)",
                     name));
}

namespace {

struct RopeDict {
  RopeScaling scaling;
  std::optional<double> theta;
  std::optional<double> partial;
};

double dict_number(ConfigReader& r, const std::string& path, const Json& d, const char* key, bool required) {
  auto it = d.find(key);
  if (it == d.end() || it->is_null()) {
    if (required) r.fail(fmt::format("{}.{}", path, key), "missing, expected a number (required by this rope_type)");
    return 0.0;
  }
  if (!it->is_number() || !std::isfinite(it->get<double>()))
    r.fail_value(fmt::format("{}.{}", path, key), *it, "a number");
  return it->get<double>();
}

// One rope dict: 4.x rope_scaling or a 5.x rope_parameters entry. `path` is its field.
RopeDict parse_rope_dict(ConfigReader& r, const std::string& path, const Json& d) {
  if (!d.is_object()) r.fail_value(path, d, "an object with rope_type");
  RopeDict out;
  std::string type;
  for (const char* k : {"rope_type", "type"}) {
    auto it = d.find(k);
    if (it == d.end()) continue;
    if (!it->is_string()) r.fail_value(fmt::format("{}.{}", path, k), *it, "a string");
    if (!type.empty() && type != it->get<std::string>())
      r.fail(fmt::format("{}.type", path),
             fmt::format("found \"{}\", expected the same as rope_type (\"{}\")", it->get<std::string>(), type));
    type = it->get<std::string>();
  }
  if (type.empty())
    r.fail(fmt::format("{}.rope_type", path), "missing, expected \"default\", \"linear\", \"llama3\" or \"yarn\"");
  std::vector<std::string> allowed = {"rope_type", "type", "rope_theta", "partial_rotary_factor"};
  if (type == "default") {
    out.scaling.type = RopeScalingType::kNone;
  } else if (type == "linear") {
    out.scaling.type = RopeScalingType::kLinear;
    out.scaling.factor = dict_number(r, path, d, "factor", true);
    allowed.emplace_back("factor");
  } else if (type == "llama3") {
    out.scaling.type = RopeScalingType::kLlama3;
    out.scaling.factor = dict_number(r, path, d, "factor", true);
    out.scaling.low_freq_factor = dict_number(r, path, d, "low_freq_factor", true);
    out.scaling.high_freq_factor = dict_number(r, path, d, "high_freq_factor", true);
    const double omp = dict_number(r, path, d, "original_max_position_embeddings", true);
    if (omp < 1 || omp != std::floor(omp))
      r.fail_value(fmt::format("{}.original_max_position_embeddings", path), d.at("original_max_position_embeddings"),
                   "an integer >= 1");
    out.scaling.original_max_position_embeddings = static_cast<int64_t>(omp);
    for (const char* k : {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
      allowed.emplace_back(k);
  } else if (type == "yarn") {
    RopeScaling& s = out.scaling;
    s.type = RopeScalingType::kYarn;
    s.factor = dict_number(r, path, d, "factor", true);
    // Without original_max_position_embeddings HF takes max_position_embeddings
    // (read_rope fills it in). The factor is used as given, as current transformers
    // does (its issue 38224: earlier versions replaced it with max_position_embeddings /
    // this).
    if (d.contains("original_max_position_embeddings") && !d.at("original_max_position_embeddings").is_null()) {
      const double omp = dict_number(r, path, d, "original_max_position_embeddings", true);
      if (omp < 1 || omp != std::floor(omp))
        r.fail_value(fmt::format("{}.original_max_position_embeddings", path), d.at("original_max_position_embeddings"),
                     "an integer >= 1");
      s.original_max_position_embeddings = static_cast<int64_t>(omp);
    }
    // HF: `get("beta_fast") or 32`: absent, null or 0 keeps the default (so for beta_slow).
    if (const double v = dict_number(r, path, d, "beta_fast", false); v != 0.0) s.beta_fast = v;
    if (const double v = dict_number(r, path, d, "beta_slow", false); v != 0.0) s.beta_slow = v;
    s.mscale = dict_number(r, path, d, "mscale", false);
    s.mscale_all_dim = dict_number(r, path, d, "mscale_all_dim", false);
    if (d.contains("attention_factor") && !d.at("attention_factor").is_null()) {
      s.attention_factor = dict_number(r, path, d, "attention_factor", true);
      if (*s.attention_factor <= 0.0)
        r.fail_value(fmt::format("{}.attention_factor", path), d.at("attention_factor"), "a number > 0");
    }
    // HF uses the mscales only together, and only without attention_factor: the spec
    // holds what HF uses.
    if (s.mscale == 0.0 || s.mscale_all_dim == 0.0 || s.attention_factor) s.mscale = s.mscale_all_dim = 0.0;
    if (d.contains("truncate") && !d.at("truncate").is_null()) {
      if (!d.at("truncate").is_boolean())
        r.fail_value(fmt::format("{}.truncate", path), d.at("truncate"), "true or false");
      s.truncate = d.at("truncate").get<bool>();
    }
    for (const char* k : {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale",
                          "mscale_all_dim", "attention_factor", "truncate"})
      allowed.emplace_back(k);
  } else {
    r.fail(fmt::format("{}.rope_type", path),
           fmt::format("found \"{}\", expected \"default\", \"linear\", \"llama3\" or \"yarn\" (the rope types "
                       "the spec implements)",
                       type));
  }
  if (out.scaling.factor <= 0.0) r.fail_value(fmt::format("{}.factor", path), d.at("factor"), "a number > 0");
  for (auto it = d.begin(); it != d.end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      r.fail_value(fmt::format("{}.{}", path, it.key()), it.value(),
                   fmt::format("no such key with rope_type \"{}\" (fk import-hf cannot tell whether it changes the "
                               "rotation)",
                               type));
  if (d.contains("rope_theta") && !d.at("rope_theta").is_null()) {
    out.theta = dict_number(r, path, d, "rope_theta", true);
    if (*out.theta <= 0.0) r.fail_value(fmt::format("{}.rope_theta", path), d.at("rope_theta"), "a number > 0");
  }
  if (d.contains("partial_rotary_factor") && !d.at("partial_rotary_factor").is_null())
    out.partial = dict_number(r, path, d, "partial_rotary_factor", true);
  return out;
}

}  // namespace

RopeRead read_rope(ConfigReader& r, double default_theta) {
  RopeRead rr;
  const Json* params = r.get("rope_parameters");
  const Json* top_theta = r.get("rope_theta");
  const Json* scaling = r.get("rope_scaling");
  const Json* top_partial = r.get("partial_rotary_factor");
  std::optional<double> theta, partial;
  if (top_theta != nullptr && !top_theta->is_null()) theta = r.number("rope_theta");
  if (top_partial != nullptr && !top_partial->is_null()) partial = r.number("partial_rotary_factor");

  auto merge = [&](std::optional<double>& into, const std::optional<double>& v, const std::string& top_key,
                   const std::string& path) {
    if (!v) return;
    if (into && *into != *v)
      r.fail(top_key, fmt::format("found {}, expected the same value as {} ({})", yaml_float_text(*into), path,
                                  yaml_float_text(*v)));
    into = v;
  };

  if (params != nullptr && !params->is_null()) {
    if (!params->is_object()) r.fail_value("rope_parameters", *params, "an object");
    if (scaling != nullptr && !scaling->is_null())
      r.fail_value("rope_scaling", *scaling, "null when rope_parameters is given (one or the other)");
    rr.keyed = params->contains("full_attention") || params->contains("sliding_attention");
    if (rr.keyed) {
      for (auto it = params->begin(); it != params->end(); ++it) {
        const std::string path = "rope_parameters." + it.key();
        if (it.key() != "full_attention" && it.key() != "sliding_attention")
          r.fail_value(path, it.value(),
                       "only full_attention and sliding_attention entries in a per-layer-type "
                       "rope_parameters");
        const RopeDict d = parse_rope_dict(r, path, it.value());
        merge(partial, d.partial, "partial_rotary_factor", path + ".partial_rotary_factor");
        if (it.key() == "full_attention") {
          rr.has_full = true;
          rr.scaling = d.scaling;
          merge(theta, d.theta, "rope_theta", path + ".rope_theta");
        } else {
          if (d.scaling.type != RopeScalingType::kNone)
            r.fail(path + ".rope_type", fmt::format("found \"{}\", expected \"default\" (the spec applies rope "
                                                    "scaling to full-attention layers only)",
                                                    rope_scaling_name(d.scaling.type)));
          if (!d.theta) r.fail(path + ".rope_theta", "missing, expected a number");
          rr.sliding_theta = d.theta;
        }
      }
    } else {
      const RopeDict d = parse_rope_dict(r, "rope_parameters", *params);
      rr.scaling = d.scaling;
      merge(theta, d.theta, "rope_theta", "rope_parameters.rope_theta");
      merge(partial, d.partial, "partial_rotary_factor", "rope_parameters.partial_rotary_factor");
    }
  } else if (scaling != nullptr && !scaling->is_null()) {
    const RopeDict d = parse_rope_dict(r, "rope_scaling", *scaling);
    rr.scaling = d.scaling;
    merge(theta, d.theta, "rope_theta", "rope_scaling.rope_theta");
    merge(partial, d.partial, "partial_rotary_factor", "rope_scaling.partial_rotary_factor");
  }
  if (rr.scaling.type == RopeScalingType::kYarn && rr.scaling.original_max_position_embeddings == 0) {
    // HF's yarn takes the model's context as the original one when the dict has none.
    rr.scaling.original_max_position_embeddings = r.integer("max_position_embeddings");
  }
  if (theta) {
    rr.theta = *theta;
  } else {
    rr.theta = default_theta;
    r.note_default("rope_theta", yaml_float_text(default_theta));
  }
  if (rr.theta <= 0.0) r.fail("rope_theta", fmt::format("found {}, expected a number > 0", yaml_float_text(rr.theta)));
  rr.partial_rotary_factor = partial.value_or(1.0);
  return rr;
}

void apply_rope(ConfigReader& r, Architecture& a, const RopeRead& rope, std::optional<double> local_theta,
                bool partial_allowed) {
  a.position.kind = PositionKind::kRope;
  a.position.rope_style = RopeStyle::kNeox;
  a.position.rope_theta = rope.theta;
  a.position.rope_scaling = rope.scaling;
  if (rope.partial_rotary_factor != 1.0 && !partial_allowed)
    r.fail("partial_rotary_factor", fmt::format("found {}, expected 1.0 ({} rotates the whole head)",
                                                yaml_float_text(rope.partial_rotary_factor), r.cls()));
  if (rope.partial_rotary_factor <= 0.0 || rope.partial_rotary_factor > 1.0)
    r.fail("partial_rotary_factor",
           fmt::format("found {}, expected a number in (0, 1]", yaml_float_text(rope.partial_rotary_factor)));
  a.position.partial_rotary_factor = rope.partial_rotary_factor;
  bool any_full = false, any_sliding = false;
  for (int64_t l = 0; l < a.num_hidden_layers; ++l)
    (a.layer_type(l) == LayerType::kSliding ? any_sliding : any_full) = true;
  a.position.local_rope_theta.reset();
  if (rope.keyed) {
    if (any_full && !rope.has_full)
      r.fail("rope_parameters", "found no full_attention entry, expected one (the model has full-attention layers)");
    if (any_sliding && !rope.sliding_theta)
      r.fail("rope_parameters",
             "found no sliding_attention entry, expected one (the model has sliding-attention layers)");
    if (any_sliding) a.position.local_rope_theta = rope.sliding_theta;
  } else if (any_sliding && local_theta) {
    a.position.local_rope_theta = local_theta;
  }
}

std::optional<std::vector<LayerType>> read_layer_types(ConfigReader& r, int64_t layers) {
  const Json* v = r.get("layer_types");
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_array()) r.fail_value("layer_types", *v, "a list of \"full_attention\" / \"sliding_attention\"");
  if (static_cast<int64_t>(v->size()) != layers)
    r.fail("layer_types",
           fmt::format("found {} entries, expected one per layer (num_hidden_layers = {})", v->size(), layers));
  std::vector<LayerType> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& t = (*v)[i];
    if (t == "full_attention") {
      out.push_back(LayerType::kFull);
    } else if (t == "sliding_attention") {
      out.push_back(LayerType::kSliding);
    } else {
      r.fail_value(fmt::format("layer_types[{}]", i), t, "\"full_attention\" or \"sliding_attention\"");
    }
  }
  return out;
}

namespace {

// The length of the shortest prefix of `per_layer` that repeats to make it.
template <typename T>
size_t shortest_period(const std::vector<T>& per_layer) {
  for (size_t p = 1; p < per_layer.size(); ++p) {
    bool repeats = true;
    for (size_t i = p; i < per_layer.size() && repeats; ++i) repeats = per_layer[i] == per_layer[i % p];
    if (repeats) return p;
  }
  return per_layer.size();
}

}  // namespace

void set_rope_layers(Architecture& a, const std::vector<bool>& per_layer) {
  a.position.rope_layers.clear();
  if (std::find(per_layer.begin(), per_layer.end(), false) == per_layer.end()) return;
  const size_t period = shortest_period(per_layer);
  a.position.rope_layers.assign(per_layer.begin(), per_layer.begin() + static_cast<std::ptrdiff_t>(period));
}

void set_layer_pattern(ConfigReader& r, Architecture& a, const std::vector<LayerType>& per_layer,
                       std::optional<int64_t> window, const char* window_key) {
  FK_ASSERT(!per_layer.empty());
  const size_t period = shortest_period(per_layer);
  a.attention.layer_types.assign(per_layer.begin(), per_layer.begin() + static_cast<std::ptrdiff_t>(period));
  const bool any_sliding = std::find(per_layer.begin(), per_layer.end(), LayerType::kSliding) != per_layer.end();
  if (any_sliding && !window)
    r.fail(window_key, "found null, expected the window size (the model has sliding-attention layers)");
  if (any_sliding && *window < 1) r.fail(window_key, fmt::format("found {}, expected an integer >= 1", *window));
  a.attention.sliding_window = any_sliding ? window : std::nullopt;
}

}  // namespace fk::spec::hf
