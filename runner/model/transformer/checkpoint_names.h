// Where the transformer family's canonical tensors (weights.h: HF Llama-style names)
// live in a HuggingFace checkpoint, per model_type (docs/checkpoints.md, "Parameter
// names per model_type"): the family's `checkpoint_names` (runner/model/family.h).
#pragma once

#include "runner/model/checkpoint_weights.h"

#include <string>
#include <vector>

namespace fk::runner {

// The map of a model_type; throws fk::Error(kUnsupported) naming it when there is none.
TensorMap hf_tensor_map(const std::string& model_type);
// The model_types hf_tensor_map knows.
std::vector<std::string> hf_supported_model_types();

}  // namespace fk::runner
