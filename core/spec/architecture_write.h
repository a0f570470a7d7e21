// Writing an Architecture as architecture spec YAML (the inverse of
// architecture_load.h), as `fk import-hf` does.
//
// Every field is written explicitly, so the file does not depend on the loader's
// defaults; loading the text back gives an equal Architecture (same values, the
// checkpoint resolved against the file's folder). Sections that do not apply are
// left out where the loader forbids them (rope fields of learned positions, `moe:` of
// a dense model, the llama3 factors of linear scaling). No presets are written.
#pragma once

#include "core/spec/architecture.h"

#include <string>

namespace fk::spec {

// The YAML text of `a` (kind, name, every model field; `checkpoint` as stored in
// `a`, which may be relative to where the file will be written). `header` lines, if
// any, are written first as `#` comments.
std::string architecture_to_yaml(const Architecture& a, const std::vector<std::string>& header = {});

// A number as the specs write it: shortest text that reads back to the same double,
// always with a '.' or an exponent so YAML 1.1 readers take it as a float
// (500000.0, 1.0e-05).
std::string yaml_float_text(double v);

}  // namespace fk::spec
