// DeepSeek-V3 (DeepseekV3ForCausalLM, transformers' DeepseekV3Config; the R1 and V3.1
// checkpoints and Kimi K2 share its layers): pre-RMSNorm decoder layers whose attention
// is multi-head latent attention (the `mla:` section, core/spec/families/mla.h) and
// whose MLP is DeepSeek's MoE after first_k_dense_replace dense layers: n_routed_experts
// experts of moe_intermediate_size picked by sigmoid scores in n_group groups of which
// topk_group compete, steered by e_score_correction_bias (noaux_tc), renormalised
// (norm_topk_prob) and scaled by routed_scaling_factor, plus n_shared_experts shared
// experts of moe_intermediate_size each. Rope covers qk_rope_head_dim channels of each
// head, interleaved pairs by default (rope_interleave: GPT-J style), YaRN with
// mscale_all_dim also scaling the softmax (mla_softmax_scale).
//
// Keys of DeepSeek's own configs (modeling_deepseek.py) are accepted when they say what
// HF's model does: scoring_func sigmoid, topk_method noaux_tc, moe_layer_freq 1; the
// multi-token-prediction layers (num_nextn_predict_layers) are not part of the forward
// pass and are skipped, as HF skips them.
//
// DeepSeek-V2 (DeepseekV2ForCausalLM, DeepseekV2Config; V2-Lite, V2, V2.5): the same
// layers with softmax router scores, topk_method greedy (the top k of all experts) or
// group_limited_greedy (the topk_group groups with the best single score compete), never
// renormalised, times routed_scaling_factor, plus the shared experts; rope always over
// interleaved pairs; the softmax scale as V3's (YaRN's mscale^2 included: transformers
// 5.17's DeepseekV2Attention applies it, as DeepSeek's own code and vLLM do; the HF
// fixture with unequal mscales shows it).
#include "core/spec/families/mla.h"
#include "core/spec/hf_models.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace fk::spec::hf {

namespace {

// What DeepseekV2Config and DeepseekV3Config share: the decoder's sizes (`d`), MLA's
// section, the rope (the caller sets its style), the experts, the dense layers, the
// routed experts' scale and the router's score function (the caller sets the routing).
struct DeepseekDefaults {
  DecoderDefaults decoder;
  const char* cls;
  int64_t experts, shared_experts, moe_intermediate_size, first_dense;
  std::optional<int64_t> experts_per_token;  // nullopt: num_experts_per_tok is required
  double routed_scaling_factor;
  MoeScoring scoring;
  const char* scorer;  // HF's class that scores, for the scoring_func message
};

void fill_deepseek_common(ConfigReader& r, Architecture& a, DeepseekDefaults d) {
  const int64_t rope_dim = r.integer_or("qk_rope_head_dim", 64, limits::kHeads);
  d.decoder.head_dim = rope_dim;
  read_decoder_core(r, a, d.decoder);
  if (a.head_dim != rope_dim)
    r.fail("head_dim", fmt::format("found {}, expected qk_rope_head_dim ({}): {} sets head_dim to it", a.head_dim,
                                   rope_dim, d.cls));
  if (r.boolean_or("attention_bias", false))
    r.fail("attention_bias", "found true, expected false (MLA's projections without biases are built)");
  r.require_inert("mlp_bias", fmt::format("{}'s MLPs and experts without biases are built", d.cls));
  MlaSpec& mla = a.sections.edit<MlaSpec>();
  if (!r.has("q_lora_rank")) {
    mla.q_lora_rank = 1536;
    r.note_default("q_lora_rank", "1536");
  } else {  // null: no query compression (q_proj)
    mla.q_lora_rank = r.optional_integer("q_lora_rank", limits::kMlaRank).value_or(0);
  }
  mla.kv_lora_rank = r.integer_or("kv_lora_rank", 512, limits::kMlaRank);
  mla.qk_nope_head_dim = r.integer_or("qk_nope_head_dim", 128, limits::kMlaHeadDim);
  mla.v_head_dim = r.integer_or("v_head_dim", 128, limits::kMlaHeadDim);
  if (const Json* qk = r.get("qk_head_dim"); qk != nullptr && !qk->is_null() && *qk != mla.qk_nope_head_dim + rope_dim)
    r.fail_value("qk_head_dim", *qk,
                 fmt::format("qk_nope_head_dim + qk_rope_head_dim ({})", mla.qk_nope_head_dim + rope_dim));
  r.ignore({"qk_head_dim", "pretraining_tp"});
  set_layer_pattern(r, a, uniform(a.num_hidden_layers, LayerType::kFull), std::nullopt, "sliding_window");
  apply_rope(r, a, read_rope(r, 10000.0), std::nullopt, false);

  MoeSpec& m = a.moe;
  m.num_experts = r.integer_or("n_routed_experts", d.experts, 2);
  m.experts_per_token = d.experts_per_token ? r.integer_or("num_experts_per_tok", *d.experts_per_token)
                                            : r.integer("num_experts_per_tok", limits::kExpertsPerToken);
  m.moe_intermediate_size =
      r.integer_or("moe_intermediate_size", d.moe_intermediate_size, limits::kMoeIntermediateSize);
  m.shared_experts = r.integer_or("n_shared_experts", d.shared_experts, limits::kSharedExperts);
  m.shared_intermediate_size = m.shared_experts > 0 ? m.moe_intermediate_size : 0;
  m.first_dense_layers = r.integer_or("first_k_dense_replace", d.first_dense, 0);
  if (m.first_dense_layers >= a.num_hidden_layers)
    r.fail("first_k_dense_replace",
           fmt::format("found {}, which leaves no MoE layer in {} layers", m.first_dense_layers, a.num_hidden_layers));
  if (r.has_value("moe_layer_freq") && r.integer_or("moe_layer_freq", 1) != 1)
    r.fail("moe_layer_freq", "expected 1 (every layer after first_k_dense_replace is MoE, as HF builds them)");
  m.routed_scaling_factor = r.number_or("routed_scaling_factor", d.routed_scaling_factor, limits::kRoutedScalingFactor);
  m.scoring = d.scoring;
  const char* scoring = d.scoring == MoeScoring::kSigmoid ? "sigmoid" : "softmax";
  if (r.has_value("scoring_func") && r.string_or("scoring_func", scoring) != scoring)
    r.fail("scoring_func", fmt::format("expected {} ({}'s scores)", scoring, d.scorer));
  // Training and serving switches of DeepSeek's configs, and the multi-token-prediction
  // layers HF's forward pass skips.
  r.ignore({"aux_loss_alpha", "seq_aux", "ep_size", "num_nextn_predict_layers"});
}

}  // namespace

void fill_deepseek_v3(ConfigReader& r, Architecture& a) {
  fill_deepseek_common(r, a,
                       {{.max_position_embeddings = 4096, .rms_norm_eps = 1e-6, .vocab_size = 129280},
                        "DeepseekV3Config",
                        256,
                        1,
                        2048,
                        3,
                        8,
                        2.5,
                        MoeScoring::kSigmoid,
                        "DeepseekV3TopkRouter"});
  // rope_interleave (default true): HF de-interleaves each head's rotary channels before
  // rotating halves, which gives the scores of rotating interleaved pairs.
  a.position.rope_style = r.boolean_or("rope_interleave", true) ? RopeStyle::kGptj : RopeStyle::kNeox;
  MoeSpec& m = a.moe;
  m.renormalize = r.boolean_or("norm_topk_prob", true);
  m.score_correction_bias = true;
  m.n_group = r.integer_or("n_group", 8, limits::kExpertGroups);
  m.topk_group = r.integer_or("topk_group", 4, limits::kExpertGroups);
  if (r.has_value("topk_method") && r.string_or("topk_method", "noaux_tc") != "noaux_tc")
    r.fail("topk_method", "expected noaux_tc (DeepseekV3TopkRouter: grouped top-k steered by e_score_correction_bias)");
}

void fill_deepseek_v2(ConfigReader& r, Architecture& a) {
  fill_deepseek_common(r, a,
                       {{.max_position_embeddings = 2048, .rms_norm_eps = 1e-6, .vocab_size = 32000},
                        "DeepseekV2Config",
                        64,
                        2,
                        1407,
                        0,
                        std::nullopt,
                        1.0,
                        MoeScoring::kSoftmax,
                        "DeepseekV2Moe"});
  // apply_rotary_emb views each head's rotary channels as complex pairs: GPT-J style.
  a.position.rope_style = RopeStyle::kGptj;
  MoeSpec& m = a.moe;
  m.score_correction_bias = false;
  m.renormalize = false;
  // DeepseekV2Moe never renormalises the top-k weights; DeepSeek's own code did when
  // norm_topk_prob was set, so a config that sets it means something HF does not run.
  if (r.boolean_or("norm_topk_prob", false))
    r.fail("norm_topk_prob",
           "found true, expected false (HF's DeepseekV2Moe ignores it and never renormalises the top-k weights)");
  const std::string method = r.string_or("topk_method", "greedy");
  if (method == "greedy") {  // every expert competes; n_group and topk_group are not read
    r.ignore({"n_group", "topk_group"});
  } else if (method == "group_limited_greedy") {
    m.n_group = r.integer("n_group", limits::kExpertGroups);
    m.topk_group = r.integer("topk_group", limits::kExpertGroups);
  } else {
    r.fail("topk_method", fmt::format("found \"{}\", expected \"greedy\" or \"group_limited_greedy\"", method));
  }
}

}  // namespace fk::spec::hf
