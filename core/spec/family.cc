#include "core/spec/family.h"

#include "core/error.h"

#include <mutex>

namespace fk::spec {

FamilyRegistry& FamilyRegistry::global() {
  static FamilyRegistry r;
  return r;
}

void FamilyRegistry::add(FamilyRules rules) {
  for (const auto& s : rules.sections) {
    if (s.key.empty() || s.read == nullptr || s.check_limits == nullptr || s.write_yaml == nullptr ||
        s.to_json == nullptr || s.from_json == nullptr || s.structure == nullptr)
      fail(ErrorKind::kInvalidArgument, "model family '{}': section '{}' lacks a key or a function", rules.name, s.key);
    for (const auto& f : common_architecture_fields())
      if (f == s.key)
        fail(ErrorKind::kInvalidArgument, "model family '{}': section '{}' is a common field", rules.name, s.key);
    for (const auto& f : rules.fields)
      if (f.key == s.key)
        fail(ErrorKind::kInvalidArgument, "model family '{}': '{}' is both a field and a section", rules.name, s.key);
  }
  if (!rules.name.empty() &&
      (rules.layout_misfits == nullptr || rules.memory_estimate == nullptr || rules.category == nullptr))
    fail(ErrorKind::kInvalidArgument, "model family '{}' lacks {}", rules.name,
         rules.layout_misfits == nullptr    ? "layout_misfits"
         : rules.memory_estimate == nullptr ? "memory_estimate"
                                            : "category");
  table_.add(std::move(rules));
}

void register_builtin_families() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_transformer_family(FamilyRegistry::global());
    register_mamba_family(FamilyRegistry::global());
    register_convnext_family(FamilyRegistry::global());
  });
}

const std::vector<std::string>& common_architecture_fields() {
  static const std::vector<std::string> fields = {
      "kind",   "name",  "model_type", "hf_id",     "family",          "model_family", "source",
      "dtype",  "checkpoint", "presets", "hidden_size", "num_hidden_layers", "vocab_size", "norm",
      "embedding", "head"};
  return fields;
}

bool family_takes(const FamilyRules& rules, const std::string& key) {
  for (const auto& f : common_architecture_fields())
    if (f == key) return true;
  for (const auto& f : rules.fields)
    if (f.key == key) return true;
  return family_section(rules, key) != nullptr;
}

const SectionCodec* family_section(const FamilyRules& rules, const std::string& key) {
  for (const auto& s : rules.sections)
    if (s.key == key) return &s;
  return nullptr;
}

const std::vector<FastKernelsCategory>& fastkernels_categories() {
  using C = FastKernelsCategory;
  static const std::vector<C> all = {C::kDenseMoeLlm,      C::kLinearAttentionSsm, C::kVisionVideoAudio,
                                     C::kMultimodalEncoder, C::kEdgeDetection,      C::kScience3dRobotics,
                                     C::kRecsysSpecialized, C::kWorldModel};
  return all;
}

std::string_view fastkernels_category_name(FastKernelsCategory c) {
  switch (c) {
    case FastKernelsCategory::kDenseMoeLlm: return "Dense & MoE LLMs";
    case FastKernelsCategory::kLinearAttentionSsm: return "Linear attention & SSM";
    case FastKernelsCategory::kVisionVideoAudio: return "Vision / video / audio";
    case FastKernelsCategory::kMultimodalEncoder: return "Multimodal & encoders";
    case FastKernelsCategory::kEdgeDetection: return "Edge & detection";
    case FastKernelsCategory::kScience3dRobotics: return "3D / robotics / science";
    case FastKernelsCategory::kRecsysSpecialized: return "Recsys & specialized";
    case FastKernelsCategory::kWorldModel: return "World models";
  }
  return "?";
}

std::string fastkernels_category_of(const Architecture& a) {
  register_builtin_families();
  const FamilyRules* rules = FamilyRegistry::global().find(a.model_family);
  return rules == nullptr ? "" : std::string(fastkernels_category_name(rules->category(a)));
}

const FamilyRules& family_rules(const Architecture& a) {
  register_builtin_families();
  return FamilyRegistry::global().rules(a.model_family);
}

Workload family_workload(const Architecture& a, const Workload& w) {
  register_builtin_families();
  const FamilyRules* rules = FamilyRegistry::global().find(a.model_family);
  return rules == nullptr || rules->workload == nullptr ? w : rules->workload(a, w);
}

bool architecture_has_no_vocabulary(const Architecture& a) {
  register_builtin_families();
  const FamilyRules* rules = FamilyRegistry::global().find(a.model_family);
  if (rules == nullptr) return false;
  for (const auto& s : rules->sections)
    if (s.no_vocabulary && a.sections.has(s.key)) return true;
  return false;
}

std::optional<ImageInput> architecture_image_input(const Architecture& a) {
  register_builtin_families();
  const FamilyRules* rules = FamilyRegistry::global().find(a.model_family);
  if (rules == nullptr) return std::nullopt;
  for (const auto& s : rules->sections)
    if (s.image_input != nullptr && a.sections.has(s.key)) return s.image_input(a);
  return std::nullopt;
}

}  // namespace fk::spec
