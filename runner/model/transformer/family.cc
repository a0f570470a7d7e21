// The transformer family, runner side (runner/model/family.h): builds a Transformer
// (transformer.h). The spec side is core/spec/families/transformer.cc.
#include "runner/model/family.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/spec/families/vision.h"
#include "runner/model/transformer/checkpoint_names.h"
#include "runner/model/transformer/transformer.h"

#include <fmt/format.h>

namespace fk::runner {
namespace {

std::unique_ptr<Model> build_transformer(const ModelInputs& in) {
  return std::make_unique<Transformer>(in.arch, in.workload, in.placement, in.comms,
                                       family_weights<ModelWeights>(in, "transformer"), in.runtime);
}

// Logits from an LM head; an encoder (no head) returns its final hidden states.
ModelOutput transformer_output(const spec::Architecture& a) {
  if (a.head.kind == spec::HeadKind::kLm) return {OutputKind::kLogits, a.vocab_size};
  if (a.sections.has(spec::VisionSpec::kKey))
    return {OutputKind::kFeatures, a.hidden_size, HiddenStates::kEmbeddingsAndLayers};
  return {OutputKind::kFeatures, a.hidden_size};
}

std::unique_ptr<Weights> transformer_streamed(const spec::Architecture& a, const Placement& p, const WeightSource& s,
                                              DType dtype, kernels::Backend& backend) {
  return std::make_unique<ModelWeights>(ModelWeights::streamed(a, p, s, dtype, backend));
}

TensorMap transformer_checkpoint_names(const spec::Architecture& a) { return hf_tensor_map(a.model_type); }

// The prompt, then one token per decode step on the KV cache. An encoder (not causal)
// has no decode steps: its one pass takes the prompt, or a vision encoder's images (the
// workload's seq_len is then their tokens: spec::vision_workload).
std::vector<ModelStep> transformer_steps(const spec::Architecture& a, const spec::Workload& w) {
  std::vector<ModelStep> steps = {{"prefill", w.seq_len, 0}};
  if (!a.attention.causal) return steps;
  for (int64_t j = 0; j < w.decode_steps; ++j) steps.push_back({fmt::format("decode.{}", j), 1, w.seq_len + j});
  return steps;
}

// A vision encoder's images (random_image_prompt); token ids for every other transformer.
Tensor transformer_prompt(const spec::Architecture& a, const spec::Workload& w, const Placement& p, uint64_t seed) {
  const auto* v = a.sections.find<spec::VisionSpec>();
  if (v == nullptr) return random_token_prompt(a, w, p, seed);
  return random_image_prompt(w, p, v->num_channels, v->image_size, seed);
}

}  // namespace

void register_transformer_model_family(ModelFamilyRegistry& r) {
  ModelFamily f;
  f.name = "transformer";
  f.build = build_transformer;
  f.steps = transformer_steps;
  f.output = transformer_output;
  set_weight_functions<ModelWeights>(f);
  f.streamed_weights = transformer_streamed;
  f.checkpoint_names = transformer_checkpoint_names;
  f.prompt = transformer_prompt;
  r.add(std::move(f));
}

}  // namespace fk::runner
