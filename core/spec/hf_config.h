// Importing a HuggingFace config.json as an architecture spec (`fk import-hf`).
//
// Pure: JSON in, Architecture out; no file is written here. Both generations of
// config.json are read: transformers 4.x (rope_theta + rope_scaling, torch_dtype, layer
// patterns implied by the model type) and 5.x (rope_parameters, possibly keyed by layer
// type, per-layer layer_types, dtype). The supported model types are those the spec
// language expresses exactly (hf_supported_model_types()); "gemma3" imports its
// text_config.
//
// Contract: the result is exact or the import fails. A value the spec cannot express
// (an unsupported rope type, attention bias where the model has none, partial rotary
// on a model that rotates the whole head, ...) and any key the importer does not know
// and cannot prove harmless are errors, never silently dropped. Keys that do not affect
// the forward pass (token ids, dropouts, use_cache, ...) are ignored by an explicit list
// per model type. Absent keys take the transformers config class's default, and each
// such default is named in the spec's `source`. Errors are fk::Error
// (kInvalidArgument) with the message "<file>: <field>: found <value>, expected <what>";
// malformed JSON, and a number no double can hold (1e400), report
// "<file>:<line>:<column>: ...". Sizes must fit the spec's limits (core/spec/limits.h).
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/architecture_write.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace fk::spec {

struct HfImportOptions {
  std::string name;            // spec name; "" = from _name_or_path, else the config's folder
  std::optional<DType> dtype;  // overrides the config's torch_dtype / dtype
  std::string checkpoint;      // stored as is in Architecture::checkpoint ("" = none)
};

struct HfImport {
  Architecture arch;                       // validated (architecture_validate)
  std::vector<std::string> defaults_used;  // "rope_theta=10000.0": absent keys, class defaults
  std::string transformers_version;        // as the config records it ("" if absent)
};

// The model_type values import understands ("gemma3" included).
std::vector<std::string> hf_supported_model_types();

// Converts a parsed config.json. `file` names it in messages, in `source`, and (its
// folder) in the default name.
HfImport hf_config_import(const nlohmann::json& config, const std::string& file, const HfImportOptions& options = {});

// Reads `file`, parses it as JSON and imports it.
HfImport hf_config_import_file(const std::string& file, const HfImportOptions& options = {});

// The checkpoint beside a config: its folder when that holds model.safetensors.index.json,
// else its model.safetensors, else "" (absolute paths).
std::string hf_checkpoint_beside(const std::string& config_file);

// Makes a spec name from free text: characters other than letters, digits, '.', '_'
// and '-' become '-', and leading ones that are not a letter or digit are dropped.
std::string hf_spec_name(const std::string& text);

}  // namespace fk::spec
