// ConvNeXt (ConvNextModel, transformers' ConvNextConfig) and ConvNeXt V2
// (ConvNextV2Model, ConvNextV2Config): image backbones of model_family convnext
// (core/spec/families/convnext.h). The stages' depths and widths, the stem's patch_size,
// the activation and the pooler's layer_norm_eps come from the config; the blocks'
// kernel 7, 4x MLP and LayerNorm eps 1e-6 are fixed in the model classes. V1's layer
// scale is there when layer_scale_init_value > 0 (its value only initialises the
// weights). The backbone keys (out_features, out_indices, stage_names) choose which
// stages ConvNextBackbone returns, and drop_path_rate is training-only: both ignored.
#include "core/spec/families/convnext.h"
#include "core/spec/hf_models.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fk::spec::hf {
namespace {

std::vector<int64_t> stage_list(ConfigReader& r, const char* key, std::vector<int64_t> def, IntRange range) {
  const Json* v = r.get(key);
  if (v == nullptr || v->is_null()) {
    r.note_default(key, fmt::format("[{}]", fmt::join(def, ", ")));
    return def;
  }
  if (!v->is_array() || v->empty()) r.fail_value(key, *v, "a list of stage values");
  std::vector<int64_t> out;
  for (const Json& x : *v) {
    if (!x.is_number_integer() || x.get<int64_t>() < range.min || x.get<int64_t>() > range.max)
      r.fail_value(key, *v, fmt::format("integers in [{}, {}]", range.min, range.max));
    out.push_back(x.get<int64_t>());
  }
  return out;
}

void fill_convnext_common(ConfigReader& r, Architecture& a, int version) {
  a.model_family = "convnext";
  ConvNextSpec& c = a.sections.edit<ConvNextSpec>();
  c.version = version;
  c.num_channels = r.integer_or("num_channels", 3, limits::kConvNextChannels);
  c.patch_size = r.integer_or("patch_size", 4, limits::kConvNextPatchSize);
  c.image_size = r.integer_or("image_size", 224, limits::kConvNextImageSize);
  c.depths = stage_list(r, "depths", {3, 3, 9, 3}, limits::kConvNextDepth);
  c.hidden_sizes = stage_list(r, "hidden_sizes", {96, 192, 384, 768}, limits::kConvNextWidth);
  const int64_t stages = r.integer_or("num_stages", 4, limits::kNumHiddenLayers);
  if (static_cast<int64_t>(c.depths.size()) != stages)
    r.fail("depths", fmt::format("has {} entries, expected num_stages ({})", c.depths.size(), stages));
  if (static_cast<int64_t>(c.hidden_sizes.size()) != stages)
    r.fail("hidden_sizes", fmt::format("has {} entries, expected num_stages ({})", c.hidden_sizes.size(), stages));
  if (c.side(stages - 1) < 1)
    r.fail("image_size", fmt::format("found {}, which leaves the last of {} stages no pixel (patch_size {}, then "
                                     "halved by each later stage)",
                                     c.image_size, stages, c.patch_size));
  a.num_hidden_layers = stages;
  a.hidden_size = c.hidden_sizes.back();
  a.vocab_size = 0;
  a.norm.kind = NormKind::kLayerNorm;
  a.norm.eps = r.number_or("layer_norm_eps", 1e-12, limits::kNormEps);
  a.norm.bias = true;
  a.mlp.activation = activation_from(r, "hidden_act", r.string_or("hidden_act", "gelu"));
  a.mlp.gated = false;
  a.mlp.bias = true;
  a.embedding.tied = false;
  a.head.kind = HeadKind::kNone;
  a.head.final_norm = true;
  r.ignore(
      {"drop_path_rate", "initializer_range", "out_features", "out_indices", "stage_names", "tie_word_embeddings"});
}

}  // namespace

void fill_convnext(ConfigReader& r, Architecture& a) {
  fill_convnext_common(r, a, 1);
  const double scale = r.number_or("layer_scale_init_value", 1e-6);
  a.sections.edit<ConvNextSpec>().layer_scale = scale > 0.0;
}

void fill_convnextv2(ConfigReader& r, Architecture& a) {
  fill_convnext_common(r, a, 2);
  a.sections.edit<ConvNextSpec>().layer_scale = false;
}

}  // namespace fk::spec::hf
