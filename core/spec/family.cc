#include "core/spec/family.h"

#include "core/error.h"

#include <mutex>

namespace fk::spec {

FamilyRegistry& FamilyRegistry::global() {
  static FamilyRegistry r;
  return r;
}

void FamilyRegistry::add(FamilyRules rules) {
  if (!rules.name.empty() && (rules.layout_misfits == nullptr || rules.memory_estimate == nullptr))
    fail(ErrorKind::kInvalidArgument, "model family '{}' lacks {}", rules.name,
         rules.layout_misfits == nullptr ? "layout_misfits" : "memory_estimate");
  table_.add(std::move(rules));
}

void register_builtin_families() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_transformer_family(FamilyRegistry::global());
    register_mamba_family(FamilyRegistry::global());
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
  return false;
}

const FamilyRules& family_rules(const Architecture& a) {
  register_builtin_families();
  return FamilyRegistry::global().rules(a.model_family);
}

}  // namespace fk::spec
