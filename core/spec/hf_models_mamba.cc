// Mamba (MambaForCausalLM, transformers' MambaConfig): Mamba-1 mixer layers, each a
// pre-RMSNorm residual branch, a final norm_f and an LM head tied to the embeddings by
// default (model_family mamba, core/spec/families/mamba.cc).
//
// Keys of the original mamba_ssm configs that HF conversions still carry (d_model,
// n_layer, rms_norm, fused_add_norm, ssm_cfg, pad_vocab_size_multiple) are accepted
// when they agree with the HF keys.
#include "core/spec/families/mamba.h"
#include "core/spec/hf_models.h"

#include <cmath>
#include <fmt/format.h>

namespace fk::spec::hf {

void fill_mamba(ConfigReader& r, Architecture& a) {
  a.model_family = "mamba";
  a.hidden_size = r.integer_or("hidden_size", 768, limits::kHiddenSize);
  a.num_hidden_layers = r.integer_or("num_hidden_layers", 32, limits::kNumHiddenLayers);
  a.vocab_size = r.integer_or("vocab_size", 50280, limits::kVocabSize);
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
    a.intermediate_size = static_cast<int64_t>(expand * static_cast<double>(a.hidden_size));  // MambaConfig: int(expand * hidden)
    r.note_default("intermediate_size", fmt::format("expand x hidden_size ({})", a.intermediate_size));
  }
  SsmSpec& ssm = a.sections.edit<SsmSpec>();
  ssm.state_size = r.integer_or("state_size", 16, limits::kSsmStateSize);
  ssm.conv_kernel = r.integer_or("conv_kernel", 4, limits::kSsmConvKernel);
  ssm.conv_bias = r.boolean_or("use_conv_bias", true);
  ssm.proj_bias = r.boolean_or("use_bias", false);
  const Json* rank = r.get("time_step_rank");
  if (rank == nullptr || rank->is_null() || *rank == "auto") {
    ssm.time_step_rank = (a.hidden_size + 15) / 16;  // MambaConfig: math.ceil(hidden_size / 16)
    if (rank == nullptr)
      r.note_default("time_step_rank", fmt::format("auto, ceil(hidden_size / 16) = {}", ssm.time_step_rank));
  } else if (rank->is_number_integer()) {
    ssm.time_step_rank = r.integer("time_step_rank", limits::kSsmTimeStepRank);
  } else {
    r.fail_value("time_step_rank", *rank, "an integer or \"auto\"");
  }
  const std::string act = r.string_or("hidden_act", "silu");
  if (act != "silu" && act != "swish")
    r.fail("hidden_act", fmt::format("found \"{}\", expected \"silu\" (the activation of the Mamba mixer)", act));
  if (const Json* rms = r.get("rms_norm"); rms != nullptr && !rms->is_null() && *rms != true)
    r.fail_value("rms_norm", *rms, "true (MambaForCausalLM normalises with RMSNorm)");
  a.norm.kind = NormKind::kRmsNorm;
  a.norm.placement = NormPlacement::kPre;
  a.norm.weight_offset = 0.0;
  a.norm.eps = r.number_or("layer_norm_epsilon", 1e-5, limits::kNormEps);
  a.embedding.tied = r.boolean_or("tie_word_embeddings", true);
  a.head.kind = HeadKind::kLm;
  a.head.final_norm = true;
  if (const Json* cfg = r.get("ssm_cfg"); cfg != nullptr && !cfg->is_null() && !(cfg->is_object() && cfg->empty()))
    r.fail_value("ssm_cfg", *cfg, "{} (mamba_ssm's per-layer overrides are not read; give the HF keys)");
  // time_step_* and rescale_prenorm_residual set the initialisation; residual_in_fp32
  // and fused_add_norm the precision and fusion of the residual add (vLLM keeps the
  // residual in the activation dtype, as here); use_mambapy and use_associative_scan
  // (transformers 5) pick how HF's slow path evaluates the same recurrence;
  // pad_vocab_size_multiple was applied to vocab_size already.
  r.ignore({"time_step_min", "time_step_max", "time_step_floor", "time_step_init_scheme", "time_step_scale",
            "rescale_prenorm_residual", "residual_in_fp32", "fused_add_norm", "use_mambapy", "use_associative_scan",
            "pad_vocab_size_multiple"});
}

}  // namespace fk::spec::hf
