#include "core/spec/spec_file.h"

#include <fmt/format.h>

namespace fk::spec {
namespace {

std::optional<AnySpec> dispatch(const YAML::Node& root, const std::string& file, Diagnostics& diags) {
  if (!root.IsMap()) {
    SourceMap where(file);
    ParseContext ctx{file, &diags, &where, ""};
    ctx.error(root, "", fmt::format("a spec file holds a map with a 'kind' field, found {}", yaml_describe(root)));
    return std::nullopt;
  }
  const YAML::Node kind = root["kind"];
  if (!kind.IsDefined() || !kind.IsScalar()) {
    diags.error({file, 1, 1}, "kind",
                "required field is missing: one of architecture, workload, campaign");
    return std::nullopt;
  }
  const std::string k = kind.Scalar();
  if (k == "architecture") {
    if (auto d = architecture_parse(root, file, diags)) return AnySpec(std::move(*d));
    return std::nullopt;
  }
  if (k == "workload") {
    if (auto d = workload_parse(root, file, diags)) return AnySpec(std::move(*d));
    return std::nullopt;
  }
  if (k == "campaign") {
    if (auto d = campaign_parse(root, file, diags)) return AnySpec(std::move(*d));
    return std::nullopt;
  }
  const YAML::Mark m = kind.Mark();
  const std::string hint = closest_match(k, {"architecture", "workload", "campaign"});
  diags.error({file, m.line + 1, m.column + 1}, "kind",
              fmt::format("'{}' is not one of [architecture, workload, campaign]{}", k,
                          hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
  return std::nullopt;
}

}  // namespace

std::optional<AnySpec> spec_load_string(const std::string& text, const std::string& file, Diagnostics& diags) {
  auto root = yaml_load_string(text, file, diags);
  if (!root) return std::nullopt;
  return dispatch(*root, file, diags);
}

std::optional<AnySpec> spec_load_file(const std::string& file, Diagnostics& diags) {
  auto root = yaml_load_file(file, diags);
  if (!root) return std::nullopt;
  return dispatch(*root, file, diags);
}

std::optional<Campaign> campaign_load_file(const std::string& file, Diagnostics& diags) {
  auto root = yaml_load_file(file, diags);
  if (!root) return std::nullopt;
  return campaign_parse(*root, file, diags);
}

std::optional<ArchitectureDoc> architecture_load_file(const std::string& file, Diagnostics& diags) {
  auto root = yaml_load_file(file, diags);
  if (!root) return std::nullopt;
  return architecture_parse(*root, file, diags);
}

}  // namespace fk::spec
