// The ConvNeXt family, runner side (runner/model/family.h): builds a ConvNext
// (convnext.h). The spec side is core/spec/families/convnext.cc.
#include "runner/model/family.h"

#include "core/error.h"
#include "core/spec/families/convnext.h"
#include "runner/model/convnext/convnext.h"

namespace fk::runner {
namespace {

std::unique_ptr<Model> build_convnext(const ModelInputs& in) {
  return std::make_unique<ConvNext>(in.arch, in.workload, in.placement, in.comms,
                                    family_weights<ConvNextWeights>(in, "convnext"), in.runtime);
}

// HF's ConvNextModel lists the stem's output and each stage's; its pooler_output (the
// final LayerNorm of the mean) is the output, one row of hidden_size an image.
ModelOutput convnext_output(const spec::Architecture& a) {
  const spec::ConvNextSpec& c = a.sections.get<spec::ConvNextSpec>();
  ModelOutput o{OutputKind::kFeatures, a.hidden_size, HiddenStates::kEmbeddingsAndLayers};
  o.name = "pooler_output";
  o.hidden_shapes.push_back({c.pixels(0), c.width(0)});
  for (int64_t i = 0; i < c.stages(); ++i) o.hidden_shapes.push_back({c.pixels(i), c.width(i)});
  return o;
}

// One pass over the images.
std::vector<ModelStep> convnext_steps(const spec::Architecture&, const spec::Workload&) { return {{"prefill", 1, 0}}; }

// The family's names are HF ConvNextModel's and ConvNextV2Model's own (weights.h); an
// image classifier's checkpoint holds them under "convnext." or "convnextv2.". The
// Conv2d weights are read as the matrices (or filters) their elements make.
TensorMap convnext_checkpoint_names(const spec::Architecture& a) {
  const bool v2 = a.sections.get<spec::ConvNextSpec>().v2();
  const std::string type = v2 ? "convnextv2" : "convnext";
  if (a.model_type != type)
    fail(ErrorKind::kUnsupported,
         "the convnext family reads checkpoints of model_type {} (convnext.version {}), not '{}'", type, v2 ? 2 : 1,
         a.model_type);
  return TensorMap{a.model_type, {"", type + "."}, [](const std::string& canonical, const spec::Architecture&) {
                     TensorRef r{canonical};
                     r.reshaped = true;  // [O, I, k, k] convs, GRN's [1, 1, 1, C]: the same elements in order
                     return r;
                   }};
}

Tensor convnext_prompt(const spec::Architecture& a, const spec::Workload& w, const Placement& p, uint64_t seed) {
  const spec::ConvNextSpec& c = a.sections.get<spec::ConvNextSpec>();
  return random_image_prompt(w, p, c.num_channels, c.image_size, seed);
}

}  // namespace

void register_convnext_model_family(ModelFamilyRegistry& r) {
  ModelFamily f;
  f.name = "convnext";
  f.build = build_convnext;
  f.steps = convnext_steps;
  f.output = convnext_output;
  set_weight_functions<ConvNextWeights>(f);
  f.checkpoint_names = convnext_checkpoint_names;
  f.prompt = convnext_prompt;
  r.add(std::move(f));
}

}  // namespace fk::runner
