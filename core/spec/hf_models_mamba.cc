// Mamba (MambaForCausalLM, transformers' MambaConfig): Mamba-1 mixer layers, each a
// pre-RMSNorm residual branch, a final norm_f and an LM head tied to the embeddings by
// default (model_family mamba, core/spec/families/mamba.cc). Mamba-2
// (Mamba2ForCausalLM, Mamba2Config): the same stack with Mamba-2 mixers (ssm.version 2),
// the LM head untied by default.
//
// Jamba (JambaForCausalLM, JambaConfig): a transformer (model_family transformer) whose
// layers are Mamba-1 mixers except every attn_layer_period-th from attn_layer_offset,
// which keep attention (no rope, no biases); every expert_layer_period-th layer from
// expert_layer_offset has an MoE of num_experts experts of intermediate_size, top
// num_experts_per_tok of the softmax, not renormalised (JambaSparseMoeBlock), the others
// a gated MLP. The Mamba layers (the transformer's `mamba:` section,
// core/spec/families/mamba_layers.h) normalise dt, B and C with RMSNorms.
//
// Bamba (BambaForCausalLM, BambaConfig): the same kind of hybrid with Mamba-2 mixers
// (the `mamba:` section's version 2: mamba_n_heads heads of mamba_d_head, B and C in
// mamba_n_groups groups, a gated RMSNorm before out_proj) in every layer but
// attn_layer_indices, whose attention rotates the first partial_rotary_factor (default
// 0.5) of each head; a dense gated MLP in every layer.
//
// Keys of the original mamba_ssm configs that HF conversions still carry (d_model,
// n_layer, rms_norm, fused_add_norm, ssm_cfg, pad_vocab_size_multiple) are accepted
// when they agree with the HF keys.
#include "core/spec/families/mamba.h"
#include "core/spec/families/mamba_layers.h"
#include "core/spec/hf_models.h"

#include <fmt/format.h>
#include <cmath>
#include <set>

namespace fk::spec::hf {

namespace {

// What MambaConfig and Mamba2Config share: sizes, the conv, the norms and the head.
// `tied`: the class's tie_word_embeddings default.
SsmSpec& fill_mamba_common(ConfigReader& r, Architecture& a, int64_t hidden, int64_t layers, int64_t vocab,
                           int64_t state, bool tied) {
  a.model_family = "mamba";
  a.hidden_size = r.integer_or("hidden_size", hidden, limits::kHiddenSize);
  a.num_hidden_layers = r.integer_or("num_hidden_layers", layers, limits::kNumHiddenLayers);
  a.vocab_size = r.integer_or("vocab_size", vocab, limits::kVocabSize);
  // The original configs' names of the same sizes must agree.
  for (const auto& [key, value] : {std::pair<const char*, int64_t>{"d_model", a.hidden_size}, {"n_layer", a.num_hidden_layers}}) {
    if (const Json* v = r.get(key); v != nullptr && !v->is_null() && *v != value)
      r.fail_value(key, *v, fmt::format("{} (the HF key's value)", value));
  }
  const double expand = r.number_or("expand", 2.0, RealRange{0.0, 64.0, true});
  if (const auto inner = r.optional_integer("intermediate_size", limits::kIntermediateSize)) {
    a.intermediate_size = *inner;
    if (std::abs(static_cast<double>(a.intermediate_size) - expand * static_cast<double>(a.hidden_size)) >= 1.0 &&
        r.has("expand"))
      r.fail("intermediate_size", fmt::format("found {}, expected expand x hidden_size ({} x {})", a.intermediate_size,
                                               expand, a.hidden_size));
  } else {
    a.intermediate_size = static_cast<int64_t>(expand * static_cast<double>(a.hidden_size));  // int(expand * hidden)
    r.note_default("intermediate_size", fmt::format("expand x hidden_size ({})", a.intermediate_size));
  }
  SsmSpec& ssm = a.sections.edit<SsmSpec>();
  ssm.state_size = r.integer_or("state_size", state, limits::kSsmStateSize);
  ssm.conv_kernel = r.integer_or("conv_kernel", 4, limits::kSsmConvKernel);
  ssm.conv_bias = r.boolean_or("use_conv_bias", true);
  ssm.proj_bias = r.boolean_or("use_bias", false);
  const std::string act = r.string_or("hidden_act", "silu");
  if (act != "silu" && act != "swish")
    r.fail("hidden_act", fmt::format("found \"{}\", expected \"silu\" (the activation of the Mamba mixer)", act));
  if (const Json* rms = r.get("rms_norm"); rms != nullptr && !rms->is_null() && *rms != true)
    r.fail_value("rms_norm", *rms, "true (the Mamba models normalise with RMSNorm)");
  a.norm.kind = NormKind::kRmsNorm;
  a.norm.placement = NormPlacement::kPre;
  a.norm.weight_offset = 0.0;
  a.norm.eps = r.number_or("layer_norm_epsilon", 1e-5, limits::kNormEps);
  a.embedding.tied = r.boolean_or("tie_word_embeddings", tied);
  a.head.kind = HeadKind::kLm;
  a.head.final_norm = true;
  if (const Json* cfg = r.get("ssm_cfg"); cfg != nullptr && !cfg->is_null() && !(cfg->is_object() && cfg->empty()))
    r.fail_value("ssm_cfg", *cfg, "{} (mamba_ssm's per-layer overrides are not read; give the HF keys)");
  return ssm;
}

// The dt projection's rank under `key`: an integer, or "auto" (also null or absent, the
// class default) for MambaConfig's and JambaConfig's math.ceil(hidden_size / 16).
int64_t read_time_step_rank(ConfigReader& r, const char* key, int64_t hidden) {
  const Json* rank = r.get(key);
  if (rank == nullptr || rank->is_null() || *rank == "auto") {
    const int64_t auto_rank = (hidden + 15) / 16;
    if (rank == nullptr) r.note_default(key, fmt::format("auto, ceil(hidden_size / 16) = {}", auto_rank));
    return auto_rank;
  }
  if (!rank->is_number_integer()) r.fail_value(key, *rank, "an integer or \"auto\"");
  return r.integer(key, limits::kSsmTimeStepRank);
}

}  // namespace

void fill_mamba(ConfigReader& r, Architecture& a) {
  SsmSpec& ssm = fill_mamba_common(r, a, 768, 32, 50280, 16, true);
  ssm.time_step_rank = read_time_step_rank(r, "time_step_rank", a.hidden_size);
  // time_step_* and rescale_prenorm_residual set the initialisation; residual_in_fp32
  // and fused_add_norm the precision and fusion of the residual add (vLLM keeps the
  // residual in the activation dtype, as here); use_mambapy and use_associative_scan
  // (transformers 5) pick how HF's slow path evaluates the same recurrence;
  // pad_vocab_size_multiple was applied to vocab_size already.
  r.ignore({"time_step_min", "time_step_max", "time_step_floor", "time_step_init_scheme", "time_step_scale",
            "rescale_prenorm_residual", "residual_in_fp32", "fused_add_norm", "use_mambapy", "use_associative_scan",
            "pad_vocab_size_multiple"});
}

void fill_mamba2(ConfigReader& r, Architecture& a) {
  SsmSpec& ssm = fill_mamba_common(r, a, 4096, 64, 32768, 128, false);
  ssm.version = 2;
  ssm.num_heads = r.integer_or("num_heads", 128, limits::kSsmHeads);
  ssm.head_dim = r.integer_or("head_dim", 64, limits::kSsmHeads);
  ssm.n_groups = r.integer_or("n_groups", 8, limits::kSsmHeads);
  if (ssm.num_heads * ssm.head_dim != a.intermediate_size)
    r.fail("num_heads", fmt::format("num_heads x head_dim ({} x {}) is not the mixer's width, expand x hidden_size "
                                    "({})",
                                    ssm.num_heads, ssm.head_dim, a.intermediate_size));
  // time_step_limit: [min, max], Mamba2Config's default (0.0, inf): no clamp. Python's
  // json writes inf as the bare word Infinity (read as the string "Infinity",
  // hf_config.cc); transformers 5 writes {"__float__": "Infinity"}.
  if (const Json* lim = r.get("time_step_limit"); lim != nullptr && !lim->is_null()) {
    const auto infinite = [](const Json& v) {
      const Json* word = &v;
      if (v.is_object() && v.size() == 1 && v.contains("__float__")) word = &v.at("__float__");
      return word->is_string() && word->get<std::string>() == "Infinity";
    };
    const auto bound = [&](const Json& v, bool upper) -> double {
      if (upper && infinite(v)) return 0.0;
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > limits::kSsmTimeStepLimit.max)
        r.fail_value("time_step_limit", *lim, "[min, max] with 0 <= min <= max, max a number or Infinity");
      return v.get<double>();
    };
    if (!lim->is_array() || lim->size() != 2)
      r.fail_value("time_step_limit", *lim, "[min, max] with 0 <= min <= max, max a number or Infinity");
    ssm.time_step_limit_min = bound((*lim)[0], false);
    ssm.time_step_limit_max = bound((*lim)[1], true);
    if (ssm.time_step_limit_max == 0.0 && ssm.time_step_limit_min > 0.0)
      r.fail_value("time_step_limit", *lim,
                   "a lower bound of 0 with an infinite upper one (only a clamp to [min, "
                   "max] with a finite max is run)");
    if (ssm.time_step_limit_max > 0.0 && ssm.time_step_limit_min > ssm.time_step_limit_max)
      r.fail_value("time_step_limit", *lim, "min <= max");
  }
  // The mixer's chunk_size only orders HF's (and vLLM's) chunked SSD sums; the scan here
  // walks the tokens. time_step_rank is computed by Mamba2Config but read by no layer;
  // norm_before_gate (in mamba_ssm's configs, e.g. Codestral's true) is read by no HF
  // code: HF's Mamba2 gates, then normalises. The rest as for Mamba.
  r.ignore({"chunk_size", "time_step_rank", "time_step_min", "time_step_max", "time_step_floor",
            "rescale_prenorm_residual", "residual_in_fp32", "fused_add_norm", "norm_before_gate",
            "pad_vocab_size_multiple"});
}

void fill_jamba(ConfigReader& r, Architecture& a) {
  read_decoder_core(
      r, a, {.max_position_embeddings = 262144, .rms_norm_eps = 1e-6, .num_key_value_heads = 8, .vocab_size = 65536});
  if (a.mlp.activation != Activation::kSilu)
    r.fail("hidden_act", "expected \"silu\": JambaConfig's hidden_act is the Mamba mixer's activation too");
  // JambaAttention: no rotary embedding (the Mamba layers carry the order), no biases.
  a.position = PositionSpec{};
  a.position.kind = PositionKind::kNone;
  if (const Json* w = r.get("sliding_window"); w != nullptr && !w->is_null())
    r.fail_value("sliding_window", *w, "null (Jamba's attention layers attend to the whole context here)");
  const int64_t layers = a.num_hidden_layers;
  const int64_t attn_period = r.integer_or("attn_layer_period", 8, IntRange{1, layers});
  const int64_t attn_offset = r.integer_or("attn_layer_offset", 4, IntRange{0, attn_period - 1});
  const int64_t expert_period = r.integer_or("expert_layer_period", 2, IntRange{1, layers});
  const int64_t expert_offset = r.integer_or("expert_layer_offset", 1, IntRange{0, expert_period - 1});
  const int64_t experts = r.integer_or("num_experts", 16, IntRange{1, limits::kNumExperts.max});
  const int64_t top_k = r.integer_or("num_experts_per_tok", 2, limits::kExpertsPerToken);
  if (experts > 1) {  // JambaConfig.layers_num_experts: num_experts on the expert layers, 1 elsewhere
    a.moe.num_experts = experts;
    a.moe.experts_per_token = top_k;
    a.moe.moe_intermediate_size = a.intermediate_size;  // the experts are JambaMLPs
    a.moe.renormalize = false;                          // JambaSparseMoeBlock: top-k of the softmax as is
    a.moe.dense_layers.clear();
    for (int64_t l = 0; l < layers; ++l)
      if (l % expert_period != expert_offset) a.moe.dense_layers.push_back(l);
    if (static_cast<int64_t>(a.moe.dense_layers.size()) == layers)
      r.fail("expert_layer_offset", fmt::format("leaves no MoE layer in {} layers (period {})", layers, expert_period));
  }
  MambaLayersSpec& m = a.sections.edit<MambaLayersSpec>();
  const int64_t expand = r.integer_or("mamba_expand", 2, IntRange{1, 64});
  m.inner_size = expand * a.hidden_size;
  m.state_size = r.integer_or("mamba_d_state", 16, IntRange{1, 1024});
  m.conv_kernel = r.integer_or("mamba_d_conv", 4, IntRange{2, 8});
  m.time_step_rank = read_time_step_rank(r, "mamba_dt_rank", a.hidden_size);
  m.conv_bias = r.boolean_or("mamba_conv_bias", true);
  m.proj_bias = r.boolean_or("mamba_proj_bias", false);
  m.inner_norms = true;  // JambaMambaMixer always has them
  m.attention_layers.clear();
  for (int64_t l = 0; l < layers; ++l)
    if (l % attn_period == attn_offset) m.attention_layers.push_back(l);
  if (static_cast<int64_t>(m.attention_layers.size()) == layers)
    r.fail("attn_layer_period", "makes every layer an attention layer: no Mamba layer is left");
  // use_mamba_kernels picks HF's CUDA path or its slow path over the same recurrence,
  // use_mambapy and use_associative_scan (transformers 5) how the slow path scans it;
  // num_logits_to_keep (calc_logits_for_entire_prompt in older configs) how many
  // positions get logits; mamba_inner_layernorms (older configs) is read by no HF code,
  // which always normalises dt, B and C.
  r.ignore({"use_mamba_kernels", "use_mambapy", "use_associative_scan", "num_logits_to_keep",
            "calc_logits_for_entire_prompt", "mamba_inner_layernorms"});
}

namespace {

// Bamba's Mamba-2 mixer (BambaMixer, also GraniteMoeHybrid's) from its mamba_* keys,
// with `attention` the layers that keep attention (every other layer is a Mamba layer).
void read_bamba_mixer(ConfigReader& r, Architecture& a, const std::set<int64_t>& attention, const char* layers_key) {
  MambaLayersSpec& m = a.sections.edit<MambaLayersSpec>();
  m.version = 2;
  m.inner_norms = false;
  const int64_t expand = r.integer_or("mamba_expand", 2, IntRange{1, 64});
  m.inner_size = expand * a.hidden_size;
  m.num_heads = r.integer_or("mamba_n_heads", 128, limits::kSsmHeads);
  if (m.inner_size % m.num_heads != 0)
    r.fail("mamba_n_heads", fmt::format("found {}, which does not divide the mixer's width, mamba_expand x "
                                        "hidden_size ({})",
                                        m.num_heads, m.inner_size));
  const Json* head = r.get("mamba_d_head");
  if (head == nullptr || head->is_null() || *head == "auto") {
    m.head_dim = m.inner_size / m.num_heads;  // BambaConfig: mamba_intermediate // mamba_n_heads
    if (head == nullptr)
      r.note_default("mamba_d_head", fmt::format("auto, the width / mamba_n_heads = {}", m.head_dim));
  } else if (head->is_number_integer()) {
    m.head_dim = r.integer("mamba_d_head", limits::kSsmHeads);
  } else {
    r.fail_value("mamba_d_head", *head, "an integer or \"auto\"");
  }
  if (m.num_heads * m.head_dim != m.inner_size)
    r.fail("mamba_d_head", fmt::format("mamba_n_heads x mamba_d_head ({} x {}) is not the mixer's width, "
                                       "mamba_expand x hidden_size ({})",
                                       m.num_heads, m.head_dim, m.inner_size));
  m.n_groups = r.integer_or("mamba_n_groups", 1, limits::kSsmHeads);
  m.state_size = r.integer_or("mamba_d_state", 256, limits::kSsmStateSize);
  m.conv_kernel = r.integer_or("mamba_d_conv", 4, limits::kSsmConvKernel);
  m.conv_bias = r.boolean_or("mamba_conv_bias", true);
  m.proj_bias = r.boolean_or("mamba_proj_bias", false);
  m.attention_layers.assign(attention.begin(), attention.end());
  if (static_cast<int64_t>(attention.size()) == a.num_hidden_layers)
    r.fail(layers_key, "makes every layer an attention layer: no Mamba layer is left");
  // HF's BambaMixer clamps dt to no limit (transformers 4.x hard-codes (0, inf); a limit
  // in the config would mean different things across versions): only that imports.
  if (const Json* lim = r.get("time_step_limit"); lim != nullptr && !lim->is_null()) {
    const bool open =
        lim->is_array() && lim->size() == 2 && (*lim)[0].is_number() && (*lim)[0].get<double>() == 0.0 &&
        (((*lim)[1].is_string() && (*lim)[1].get<std::string>() == "Infinity") ||
         ((*lim)[1].is_object() && (*lim)[1].contains("__float__") && (*lim)[1].at("__float__") == "Infinity"));
    if (!open) r.fail_value("time_step_limit", *lim, "[0.0, Infinity] (HF's BambaMixer runs dt unclamped)");
  }
  // mamba_chunk_size orders HF's chunked SSD sums only; the time_step_* keys set the
  // initialisation; z_loss_coefficient is a training loss; num_logits_to_keep says how
  // many positions get logits.
  r.ignore({"mamba_chunk_size", "time_step_min", "time_step_max", "time_step_floor", "z_loss_coefficient",
            "num_logits_to_keep"});
}

}  // namespace

void fill_bamba(ConfigReader& r, Architecture& a) {
  read_decoder_core(
      r, a, {.max_position_embeddings = 262144, .rms_norm_eps = 1e-5, .num_key_value_heads = 8, .vocab_size = 128000});
  if (a.mlp.activation != Activation::kSilu)
    r.fail("hidden_act", "expected \"silu\": BambaConfig's hidden_act is the Mamba mixer's activation too");
  r.require_inert("attention_bias", "BambaAttention's projections have no bias");
  r.require_inert("mlp_bias", "BambaMLP has no bias");
  set_layer_pattern(r, a, uniform(a.num_hidden_layers, LayerType::kFull), std::nullopt, "sliding_window");
  partial_rope(r, a, 0.5);
  // attn_layer_indices (null or absent: none): the layers that keep attention.
  std::set<int64_t> attention;
  if (const Json* idx = r.get("attn_layer_indices"); idx != nullptr && !idx->is_null()) {
    if (!idx->is_array()) r.fail_value("attn_layer_indices", *idx, "a list of layer indices");
    for (size_t i = 0; i < idx->size(); ++i) {
      const Json& l = (*idx)[i];
      if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= a.num_hidden_layers)
        r.fail_value(fmt::format("attn_layer_indices[{}]", i), l,
                     fmt::format("a layer index in [0, {}) (num_hidden_layers)", a.num_hidden_layers));
      attention.insert(l.get<int64_t>());
    }
  } else if (idx == nullptr) {
    r.note_default("attn_layer_indices", "[] (every layer a Mamba layer)");
  }
  read_bamba_mixer(r, a, attention, "attn_layer_indices");
}

// GraniteMoeHybrid (Granite 4.0-H): GraniteMoeShared's decoder layers (the Granite
// multipliers; num_local_experts experts of intermediate_size, top num_experts_per_tok
// renormalised, plus a shared expert of shared_intermediate_size) whose mixer is
// attention or Bamba's Mamba-2 mixer by layer_types ("attention" / "mamba"; absent or
// null: every layer Mamba); rope on whole heads only with position_embedding_type
// "rope" (null: attention without positions); num_local_experts 0 leaves the shared MLP
// alone, a dense MLP of shared_intermediate_size.
void fill_granitemoehybrid(ConfigReader& r, Architecture& a) {
  read_decoder_core(r, a, {.max_position_embeddings = 2048, .rms_norm_eps = 1e-6, .vocab_size = 32000});
  check_heads(r, a, "num_attention_heads", "num_key_value_heads");
  if (a.mlp.activation != Activation::kSilu)
    r.fail("hidden_act", "expected \"silu\": GraniteMoeHybridConfig's hidden_act is the Mamba mixer's activation too");
  const bool bias = r.boolean_or("attention_bias", false);
  a.attention.qkv_bias = bias;
  a.attention.out_bias = bias;
  set_layer_pattern(r, a, uniform(a.num_hidden_layers, LayerType::kFull), std::nullopt, "sliding_window");
  const Json* pos = r.get("position_embedding_type");
  if (pos == nullptr || pos->is_null() || *pos == "nope") {
    a.position.kind = PositionKind::kNone;
    if (pos == nullptr) r.note_default("position_embedding_type", "null (attention without positions)");
    r.ignore({"rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor"});
  } else if (*pos == "rope") {
    apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);
  } else {
    r.fail_value("position_embedding_type", *pos, "\"rope\" or null");
  }
  read_granite_scales(r, a);
  const int64_t experts = r.integer_or("num_local_experts", 8, IntRange{0, limits::kNumExperts.max});
  const int64_t shared = r.integer_or("shared_intermediate_size", 1024, limits::kSharedIntermediateSize);
  if (experts == 0) {  // the shared MLP alone: the layer's dense MLP
    a.intermediate_size = shared;
    r.ignore({"num_experts_per_tok", "output_router_logits", "router_aux_loss_coef"});
  } else {
    if (experts == 1) r.fail("num_local_experts", "found 1, expected 0 (the shared MLP alone) or at least 2");
    a.moe.num_experts = experts;
    a.moe.experts_per_token = r.integer_or("num_experts_per_tok", 2, limits::kExpertsPerToken);
    a.moe.moe_intermediate_size = a.intermediate_size;  // per expert
    a.moe.renormalize = true;                           // GraniteMoe's softmax over the top-k logits
    a.moe.shared_experts = 1;
    a.moe.shared_intermediate_size = shared;
  }
  // layer_types (layers_block_type): "mamba" or "attention" for each layer; transformers 5
  // writes them "linear_attention" and "full_attention".
  std::set<int64_t> attention;
  if (const Json* types = r.get("layer_types"); types != nullptr && !types->is_null()) {
    if (!types->is_array() || static_cast<int64_t>(types->size()) != a.num_hidden_layers)
      r.fail_value("layer_types", *types,
                   fmt::format("a list of {} entries (num_hidden_layers), each \"mamba\" or \"attention\" "
                               "(\"linear_attention\" or \"full_attention\")",
                               a.num_hidden_layers));
    for (size_t i = 0; i < types->size(); ++i) {
      const Json& t = (*types)[i];
      if (t == "attention" || t == "full_attention")
        attention.insert(static_cast<int64_t>(i));
      else if (t != "mamba" && t != "linear_attention")
        r.fail_value(fmt::format("layer_types[{}]", i), t,
                     "\"mamba\" or \"attention\" (\"linear_attention\" or \"full_attention\")");
    }
  } else if (types == nullptr) {
    r.note_default("layer_types", "every layer \"mamba\"");
  }
  read_bamba_mixer(r, a, attention, "layer_types");
}

}  // namespace fk::spec::hf
