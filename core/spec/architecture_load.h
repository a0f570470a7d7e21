// Reading architecture specs (YAML) into Architecture values, with validation.
//
// A file holds the published ("full") values and named presets ("tiny", ...) that
// override some of them. Every preset is resolved and validated on load, so a broken
// tiny preset is reported even when only the full model is used.
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/preset_doc.h"
#include "core/spec/yaml_reader.h"

#include <map>
#include <optional>
#include <string>

namespace fk::spec {

using ArchitectureDoc = PresetDoc<Architecture>;

// Parses and validates one architecture document. Returns nullopt when any error was
// reported to `diags` (all errors of the file are reported, not just the first).
std::optional<ArchitectureDoc> architecture_parse(const YAML::Node& root, const std::string& file,
                                                  Diagnostics& diags);

// Semantic checks of one resolved architecture; `ctx.where` holds field positions.
void architecture_validate(const Architecture& a, const ParseContext& ctx);
// Checks that a preset keeps the structure of the full model (GQA ratio, layer
// pattern, top-k, head_dim relation, behaviour sections).
void architecture_validate_preset(const Architecture& full, const Architecture& preset,
                                  const ParseContext& ctx);

}  // namespace fk::spec
