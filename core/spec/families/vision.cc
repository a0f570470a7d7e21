// The transformer family's `vision:` section (vision.h): reading, limits, writing, JSON,
// and its rules against the other fields.
#include "core/spec/families/vision.h"

#include "core/spec/family.h"
#include "core/spec/json_io.h"
#include "core/spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace fk::spec {
namespace {

void vision_read(MapReader& r, Architecture& a) {
  VisionSpec& v = a.sections.edit<VisionSpec>();
  r.integer("image_size", v.image_size, Need::kRequired, limits::kVisionImageSize);
  r.integer("patch_size", v.patch_size, Need::kRequired, limits::kVisionPatchSize);
  r.integer("num_channels", v.num_channels, Need::kOptional, limits::kVisionChannels);
  r.boolean("class_token", v.class_token, Need::kOptional);
  r.boolean("layer_scale", v.layer_scale, Need::kOptional);
}

bool vision_check_limits(const Architecture& a, const ParseContext& ctx) {
  const VisionSpec& v = a.sections.get<VisionSpec>();
  bool ok = ctx.check_range("vision.image_size", v.image_size, limits::kVisionImageSize);
  ok &= ctx.check_range("vision.patch_size", v.patch_size, limits::kVisionPatchSize);
  ok &= ctx.check_range("vision.num_channels", v.num_channels, limits::kVisionChannels);
  return ok;
}

void vision_write_yaml(YAML::Emitter& e, const Architecture& a) {
  const VisionSpec& v = a.sections.get<VisionSpec>();
  e << YAML::Key << VisionSpec::kKey << YAML::Value << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "image_size" << YAML::Value << static_cast<long long>(v.image_size);
  e << YAML::Key << "patch_size" << YAML::Value << static_cast<long long>(v.patch_size);
  e << YAML::Key << "num_channels" << YAML::Value << static_cast<long long>(v.num_channels);
  e << YAML::Key << "class_token" << YAML::Value << v.class_token;
  e << YAML::Key << "layer_scale" << YAML::Value << v.layer_scale;
  e << YAML::EndMap;
}

Json vision_to_json(const Architecture& a) {
  const VisionSpec& v = a.sections.get<VisionSpec>();
  return Json{{"image_size", v.image_size},
              {"patch_size", v.patch_size},
              {"num_channels", v.num_channels},
              {"class_token", v.class_token},
              {"layer_scale", v.layer_scale}};
}

void vision_from_json(const JsonIn& in, Architecture& a) {
  VisionSpec& v = a.sections.edit<VisionSpec>();
  v.image_size = in.at("image_size").i64();
  v.patch_size = in.at("patch_size").i64();
  v.num_channels = in.at("num_channels").i64();
  v.class_token = in.at("class_token").boolean();
  v.layer_scale = in.at("layer_scale").boolean();
}

// A preset may shrink the image, not change what the front and layers are made of.
std::vector<std::string> vision_structure(const Architecture& a) {
  const VisionSpec& v = a.sections.get<VisionSpec>();
  return {fmt::format("vision.class_token={}", v.class_token), fmt::format("vision.layer_scale={}", v.layer_scale)};
}

}  // namespace

const SectionCodec& vision_section() {
  static const SectionCodec codec = [] {
    SectionCodec c{VisionSpec::kKey,      false,          vision_read,      vision_check_limits,
                   vision_write_yaml,     vision_to_json, vision_from_json, vision_structure,
                   /*no_vocabulary=*/true};
    c.image_input = [](const Architecture& a) -> std::optional<ImageInput> {
      const VisionSpec& v = a.sections.get<VisionSpec>();
      return ImageInput{v.num_channels, v.image_size};
    };
    return c;
  }();
  return codec;
}

void vision_validate(const Architecture& a, const ParseContext& ctx) {
  const SourceMap& w = *ctx.where;
  auto err = [&](const std::string& field, std::string msg) { ctx.error(w.at(field), field, std::move(msg)); };
  const VisionSpec& v = a.sections.get<VisionSpec>();
  const std::string why = "does not apply to a vision encoder (it takes pixels, not token ids)";
  if (v.patch_size > v.image_size)
    err("vision.patch_size",
        fmt::format("{} is more than vision.image_size ({}): an image holds no patch", v.patch_size, v.image_size));
  if (a.attention.causal) err("attention.causal", "a vision encoder's tokens see each other: set it to false");
  if (a.head.kind != HeadKind::kNone)
    err("head.kind",
        "a vision encoder returns its hidden states (head.kind none); poolers and classifiers are not "
        "built");
  if (a.position.kind != PositionKind::kLearned)
    err("position.kind", "a vision encoder adds learned position embeddings (position.kind learned)");
  else if (v.patch_size <= v.image_size && a.max_position_embeddings != v.tokens())
    err("max_position_embeddings",
        fmt::format("{} must be the tokens of an image: floor({} / {})^2 patches{} = {}", a.max_position_embeddings,
                    v.image_size, v.patch_size, v.class_token ? " + the class token" : "", v.tokens()));
  if (a.moe.enabled()) err("moe.num_experts", "MoE vision encoders are not built");
  if (a.embedding.tied) err("embedding.tied", why);
  if (a.embedding.type_vocab_size > 0) err("embedding.type_vocab_size", why);
  if (a.embedding.scale_by_sqrt_hidden) err("embedding.scale_by_sqrt_hidden", why);
  if (a.embedding.multiplier) err("embedding.multiplier", why);
  if (a.attention.sliding_window) err("attention.sliding_window", "does not apply to a vision encoder");
  if (a.norm.placement != NormPlacement::kPre)
    err("norm.placement", "vision encoders with pre-norm layers are built (ViT, DINOv2, SigLIP)");
}

Workload vision_workload(const Architecture& a, Workload w) {
  const VisionSpec* v = a.sections.find<VisionSpec>();
  if (v == nullptr) return w;
  w.seq_len = v->tokens();
  w.decode_steps = 0;  // a decode-phase workload stays one, and does not fit (layout_misfits)
  return w;
}

int64_t vision_embedding_parameters(const Architecture& a, const VisionSpec& v) {
  const int64_t h = a.hidden_size;
  return v.patch_values() * h + h + v.prefix_tokens() * h + v.tokens() * h;
}

}  // namespace fk::spec
