// The ConvNeXt family, spec side (core/spec/family.h; the model: convnext.h). Production
// runs a ConvNeXt data-parallel: its convolutions and LayerNorms over channels are not
// sharded, so tensor parallelism does not fit (layout_misfits says so) while pipeline
// parallelism splits its stages. The runner side is runner/model/convnext/.
#include "core/spec/families/convnext.h"

#include "core/spec/family.h"
#include "core/spec/json_io.h"
#include "core/spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <algorithm>

namespace fk::spec {

int64_t ConvNextSpec::stem_parameters() const {
  const int64_t c0 = width(0);
  return c0 * num_channels * patch_size * patch_size + c0 + 2 * c0;  // conv weight and bias, LayerNorm
}

int64_t ConvNextSpec::stage_parameters(int64_t stage) const {
  const int64_t c = width(stage), inner = mlp_ratio * c;
  int64_t p = 0;
  if (stage > 0) {
    const int64_t prev = width(stage - 1);
    p += 2 * prev + c * prev * 4 + c;  // LayerNorm, then the 2 x 2 conv and its bias
  }
  int64_t block = c * kernel_size * kernel_size + c  // dwconv
                  + 2 * c                            // LayerNorm
                  + inner * c + inner                // pwconv1
                  + c * inner + c;                   // pwconv2
  if (v2()) block += 2 * inner;                      // GRN gamma and beta
  if (!v2() && layer_scale) block += c;
  return p + depth(stage) * block;
}

namespace {

// --- the convnext: section ----------------------------------------------------------

void convnext_read(MapReader& r, Architecture& a) {
  ConvNextSpec& c = a.sections.edit<ConvNextSpec>();
  r.integer("version", c.version, Need::kOptional, limits::kConvNextVersion);
  r.integer("image_size", c.image_size, Need::kRequired, limits::kConvNextImageSize);
  r.integer("num_channels", c.num_channels, Need::kOptional, limits::kConvNextChannels);
  r.integer("patch_size", c.patch_size, Need::kOptional, limits::kConvNextPatchSize);
  r.integer("kernel_size", c.kernel_size, Need::kOptional, limits::kConvNextKernel);
  r.integer("mlp_ratio", c.mlp_ratio, Need::kOptional, limits::kConvNextMlpRatio);
  r.integer_list("depths", c.depths, Need::kRequired, limits::kConvNextDepth);
  r.integer_list("hidden_sizes", c.hidden_sizes, Need::kRequired, limits::kConvNextWidth);
  r.boolean("layer_scale", c.layer_scale, Need::kOptional);
  if (c.v2()) c.layer_scale = false;  // V2's blocks have none (validate refuses the key)
  r.number("block_norm_eps", c.block_norm_eps, Need::kOptional, limits::kConvNextEps);
}

bool convnext_check_limits(const Architecture& a, const ParseContext& ctx) {
  const ConvNextSpec& c = a.sections.get<ConvNextSpec>();
  bool ok = ctx.check_range("convnext.version", c.version, limits::kConvNextVersion);
  ok &= ctx.check_range("convnext.image_size", c.image_size, limits::kConvNextImageSize);
  ok &= ctx.check_range("convnext.num_channels", c.num_channels, limits::kConvNextChannels);
  ok &= ctx.check_range("convnext.patch_size", c.patch_size, limits::kConvNextPatchSize);
  ok &= ctx.check_range("convnext.kernel_size", c.kernel_size, limits::kConvNextKernel);
  ok &= ctx.check_range("convnext.mlp_ratio", c.mlp_ratio, limits::kConvNextMlpRatio);
  for (size_t i = 0; i < c.depths.size(); ++i)
    ok &= ctx.check_range(fmt::format("convnext.depths[{}]", i), c.depths[i], limits::kConvNextDepth);
  for (size_t i = 0; i < c.hidden_sizes.size(); ++i)
    ok &= ctx.check_range(fmt::format("convnext.hidden_sizes[{}]", i), c.hidden_sizes[i], limits::kConvNextWidth);
  ok &= ctx.check_range("convnext.block_norm_eps", c.block_norm_eps, limits::kConvNextEps);
  return ok;
}

void int_list(YAML::Emitter& e, const char* key, const std::vector<int64_t>& v) {
  e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (int64_t x : v) e << static_cast<long long>(x);
  e << YAML::EndSeq;
}

void convnext_write_yaml(YAML::Emitter& e, const Architecture& a) {
  const ConvNextSpec& c = a.sections.get<ConvNextSpec>();
  e << YAML::Key << ConvNextSpec::kKey << YAML::Value << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "version" << YAML::Value << static_cast<long long>(c.version);
  e << YAML::Key << "image_size" << YAML::Value << static_cast<long long>(c.image_size);
  e << YAML::Key << "num_channels" << YAML::Value << static_cast<long long>(c.num_channels);
  e << YAML::Key << "patch_size" << YAML::Value << static_cast<long long>(c.patch_size);
  e << YAML::Key << "kernel_size" << YAML::Value << static_cast<long long>(c.kernel_size);
  e << YAML::Key << "mlp_ratio" << YAML::Value << static_cast<long long>(c.mlp_ratio);
  int_list(e, "depths", c.depths);
  int_list(e, "hidden_sizes", c.hidden_sizes);
  if (!c.v2()) e << YAML::Key << "layer_scale" << YAML::Value << c.layer_scale;
  e << YAML::Key << "block_norm_eps" << YAML::Value << c.block_norm_eps;
  e << YAML::EndMap;
}

Json convnext_to_json(const Architecture& a) {
  const ConvNextSpec& c = a.sections.get<ConvNextSpec>();
  return Json{{"version", c.version},
              {"image_size", c.image_size},
              {"num_channels", c.num_channels},
              {"patch_size", c.patch_size},
              {"kernel_size", c.kernel_size},
              {"mlp_ratio", c.mlp_ratio},
              {"depths", c.depths},
              {"hidden_sizes", c.hidden_sizes},
              {"layer_scale", c.layer_scale},
              {"block_norm_eps", c.block_norm_eps}};
}

std::vector<int64_t> json_ints(const JsonIn& in) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) out.push_back(in.at(i).i64());
  return out;
}

void convnext_from_json(const JsonIn& in, Architecture& a) {
  ConvNextSpec& c = a.sections.edit<ConvNextSpec>();
  c.version = in.at("version").i64();
  c.image_size = in.at("image_size").i64();
  c.num_channels = in.at("num_channels").i64();
  c.patch_size = in.at("patch_size").i64();
  c.kernel_size = in.at("kernel_size").i64();
  c.mlp_ratio = in.at("mlp_ratio").i64();
  c.depths = json_ints(in.at("depths"));
  c.hidden_sizes = json_ints(in.at("hidden_sizes"));
  c.layer_scale = in.at("layer_scale").boolean();
  c.block_norm_eps = in.at("block_norm_eps").f64();
}

// A preset may shrink the image, the stages' widths and depths, not change the blocks.
std::vector<std::string> convnext_structure(const Architecture& a) {
  const ConvNextSpec& c = a.sections.get<ConvNextSpec>();
  return {fmt::format("convnext.version={}", c.version), fmt::format("convnext.layer_scale={}", c.layer_scale),
          fmt::format("convnext.stages={}", c.stages())};
}

// --- the family's rules -------------------------------------------------------------

void convnext_validate(const Architecture& a, const ParseContext& ctx) {
  const SourceMap& w = *ctx.where;
  auto err = [&](const std::string& field, std::string msg) { ctx.error(w.at(field), field, std::move(msg)); };
  const ConvNextSpec& c = a.sections.get<ConvNextSpec>();
  if (c.hidden_sizes.size() != c.depths.size())
    err("convnext.hidden_sizes", fmt::format("has {} stages but convnext.depths has {}: one width a stage",
                                             c.hidden_sizes.size(), c.depths.size()));
  if (a.num_hidden_layers != c.stages())
    err("num_hidden_layers", fmt::format("{} must be the number of stages, {} (convnext.depths): a ConvNeXt's "
                                         "layers are its stages",
                                         a.num_hidden_layers, c.stages()));
  if (!c.hidden_sizes.empty() && a.hidden_size != c.hidden_sizes.back())
    err("hidden_size", fmt::format("{} must be the last stage's width, convnext.hidden_sizes[-1] = {}", a.hidden_size,
                                   c.hidden_sizes.back()));
  if (c.kernel_size % 2 == 0)
    err("convnext.kernel_size",
        fmt::format("{} must be odd (the depthwise conv pads kernel_size / 2 on each side)", c.kernel_size));
  if (c.v2() && w.has("convnext.layer_scale"))
    err("convnext.layer_scale", "applies to ConvNeXt V1 only (version 1); V2's blocks have GRN instead");
  if (c.hidden_sizes.size() == c.depths.size() && !c.depths.empty() && c.side(c.stages() - 1) < 1)
    err("convnext.image_size",
        fmt::format("{} px leaves the last of {} stages no pixel: the stem divides it by patch_size {} and every "
                    "later stage halves it",
                    c.image_size, c.stages(), c.patch_size));
  if (a.norm.kind != NormKind::kLayerNorm) err("norm.kind", "a ConvNeXt normalises with layernorm");
  if (!a.norm.bias) err("norm.bias", "a ConvNeXt's LayerNorms add a bias");
  if (!a.norm.weight) err("norm.weight", "a ConvNeXt's LayerNorms scale by a weight");
  if (a.head.kind != HeadKind::kNone)
    err("head.kind", "a ConvNeXt returns its pooled features (head.kind none); classifiers are not built");
  if (!a.head.final_norm) err("head.final_norm", "a ConvNeXt's pooled features end in a LayerNorm (HF's pooler)");
  const std::string why = "does not apply to model_family convnext";
  if (a.embedding.tied) err("embedding.tied", why);
  if (a.embedding.type_vocab_size > 0) err("embedding.type_vocab_size", why);
  if (a.embedding.norm) err("embedding.norm", why + " (the stem's LayerNorm is always there)");
  if (a.embedding.scale_by_sqrt_hidden) err("embedding.scale_by_sqrt_hidden", why);
  if (a.embedding.multiplier) err("embedding.multiplier", why);
  if (a.norm.residual_multiplier) err("norm.residual_multiplier", why);
  if (a.norm.weight_offset != 0.0) err("norm.weight_offset", why);
  if (a.head.logit_softcap) err("head.logit_softcap", why);
  if (a.head.logit_scale) err("head.logit_scale", why);
  if (a.head.bias) err("head.bias", why);
}

std::vector<std::string> convnext_layout_misfits(const Architecture& a, const Workload& w, const Layout& l) {
  std::vector<std::string> out;
  if (l.pp > a.num_hidden_layers)
    out.push_back(fmt::format("pp ({}) is more than the {} stages (num_hidden_layers)", l.pp, a.num_hidden_layers));
  if (w.phase == Phase::kDecode || w.decode_steps > 0)
    out.push_back(
        fmt::format("{} is an image backbone and cannot decode; use a prefill workload with "
                    "decode_steps 0",
                    a.name));
  return out;
}

MemoryEstimate convnext_memory_estimate(const Architecture& a, const Workload& w, const Layout& l, DeviceKind backend) {
  const ConvNextSpec& c = a.sections.get<ConvNextSpec>();
  const DType dt = w.dtype_for(a);
  const int64_t bytes = static_cast<int64_t>(dtype_size(dt));
  const int64_t batch = w.batch / l.dp;
  MemoryEstimate best;
  for (int64_t stage = 0; stage < l.pp; ++stage) {
    MemoryEstimate m;
    const int64_t first = stage_first_layer(a.num_hidden_layers, l.pp, stage);
    const int64_t count = stage_layer_count(a.num_hidden_layers, l.pp, stage);
    int64_t widest = 0;  // values an image of the widest block's working set
    int64_t traced = 0;  // values an image of the stage outputs the model stage keeps to compare runs
    for (int64_t s = first; s < first + count; ++s) {
      const int64_t p = c.stage_parameters(s), map = c.pixels(s) * c.width(s);
      m.layer_parameters += p;
      m.largest_layer_parameters = std::max(m.largest_layer_parameters, p);
      // The stream, the conv, norm and branch outputs and the sum; the inner map three
      // times (pwconv1's output, the activation, GRN's).
      widest = std::max(widest, 5 * map + 3 * c.mlp_ratio * map);
      if (s > 0) widest = std::max(widest, 2 * c.pixels(s - 1) * c.width(s - 1) + 2 * map);  // the downsampler
      traced += 2 * map;
    }
    m.parameters = m.layer_parameters;
    if (stage == 0) m.parameters += c.stem_parameters();
    if (stage == l.pp - 1) m.parameters += 2 * a.hidden_size;  // the pooler's LayerNorm
    const bool master_kept = backend == DeviceKind::kCpu && dt != DType::kF32;
    m.weights_bytes = m.parameters * (4 + (master_kept ? bytes : 0));
    // fp32 an image: the pixels and the stem's patches (first stage), the widest block's
    // working set, and the traced stage outputs.
    const int64_t front = stage == 0 ? 2 * c.num_channels * c.image_size * c.image_size : 0;
    m.activation_bytes = batch * (front + widest + traced) * 4;
    if (m.total() > best.total()) best = m;
  }
  return best;
}

// One output row an image (its pooled features); nothing is decoded.
Workload convnext_workload(const Architecture&, Workload w) {
  w.seq_len = 1;
  w.decode_steps = 0;  // a decode-phase workload stays one, and does not fit (layout_misfits)
  return w;
}

std::optional<ImageInput> convnext_image_input(const Architecture& a) {
  const ConvNextSpec& c = a.sections.get<ConvNextSpec>();
  return ImageInput{c.num_channels, c.image_size};
}

}  // namespace

void register_convnext_family(FamilyRegistry& r) {
  FamilyRules f;
  f.name = "convnext";
  f.summary = "a ConvNeXt (V1 or V2) image backbone: stages of depthwise-conv blocks, pooled features";
  f.fields = {{"mlp", true}};
  SectionCodec section{ConvNextSpec::kKey,    true,
                       convnext_read,         convnext_check_limits,
                       convnext_write_yaml,   convnext_to_json,
                       convnext_from_json,    convnext_structure,
                       /*no_vocabulary=*/true};
  section.image_input = convnext_image_input;
  f.sections = {section};
  f.validate = [](const Architecture& a, const ParseContext& ctx) {
    convnext_validate(a, ctx);
    const SourceMap& w = *ctx.where;
    if (a.mlp.gated) ctx.error(w.at("mlp.gated"), "mlp.gated", "a ConvNeXt block's MLP is not gated");
    if (!a.mlp.bias) ctx.error(w.at("mlp.bias"), "mlp.bias", "a ConvNeXt block's pointwise convs add a bias");
  };
  f.layout_misfits = convnext_layout_misfits;
  f.not_tensor_parallel =
      "a ConvNeXt is not tensor-parallel (its depthwise convs and channel LayerNorms are not sharded); run it "
      "data- or pipeline-parallel";
  f.memory_estimate = convnext_memory_estimate;
  f.category = [](const Architecture&) { return FastKernelsCategory::kEdgeDetection; };
  f.workload = convnext_workload;
  r.add(std::move(f));
}

}  // namespace fk::spec
