// The Mamba family, runner side (runner/model/family.h): builds a Mamba (mamba.h). The
// spec side is core/spec/families/mamba.cc.
#include "runner/model/family.h"
#include "core/error.h"
#include "core/spec/families/mamba.h"
#include "runner/model/mamba/mamba.h"

#include <fmt/format.h>

namespace fk::runner {
namespace {

std::unique_ptr<Model> build_mamba(const ModelInputs& in) {
  return std::make_unique<Mamba>(in.arch, in.workload, in.placement, in.comms,
                                 family_weights<MambaWeights>(in, "mamba"), in.runtime);
}

// HF's MambaModel lists each layer's output, then norm_f's, without the embeddings.
ModelOutput mamba_output(const spec::Architecture& a) {
  return {OutputKind::kLogits, a.vocab_size, HiddenStates::kLayerOutputs};
}

// The prompt, then one token per decode step on the recurrent state.
std::vector<ModelStep> mamba_steps(const spec::Architecture&, const spec::Workload& w) {
  std::vector<ModelStep> steps = {{"prefill", w.seq_len, 0}};
  for (int64_t j = 0; j < w.decode_steps; ++j) steps.push_back({fmt::format("decode.{}", j), 1, w.seq_len + j});
  return steps;
}

// The family's names are HF MambaForCausalLM's and Mamba2ForCausalLM's own (weights.h).
TensorMap mamba_checkpoint_names(const spec::Architecture& a) {
  const bool v2 = a.sections.get<spec::SsmSpec>().mamba2();
  if (a.model_type != (v2 ? "mamba2" : "mamba"))
    fail(ErrorKind::kUnsupported, "the mamba family reads checkpoints of model_type {} ({}), not '{}'",
         v2 ? "mamba2" : "mamba", v2 ? "ssm.version 2" : "Mamba-1 layers", a.model_type);
  return TensorMap{a.model_type, {""}, [](const std::string& canonical, const spec::Architecture&) {
                     return TensorRef{canonical};
                   }};
}

}  // namespace

void register_mamba_model_family(ModelFamilyRegistry& r) {
  ModelFamily f;
  f.name = "mamba";
  f.build = build_mamba;
  f.steps = mamba_steps;
  f.output = mamba_output;
  set_weight_functions<MambaWeights>(f);
  f.checkpoint_names = mamba_checkpoint_names;
  r.add(std::move(f));
}

}  // namespace fk::runner
