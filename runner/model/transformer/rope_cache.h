// The cos/sin table of rotary embeddings, as vLLM's RotaryEmbedding builds it:
// row p holds cos(p * f_i) for i < rot/2, then sin(p * f_i), with frequencies
//   f_i = theta^(-2i / rot), divided by `factor` for linear scaling, and llama3
//   scaling (HF transformers' _compute_llama3_parameters, published with Llama 3.1):
//     wavelen_i = 2 pi / f_i; low = L0 / low_freq_factor; high = L0 / high_freq_factor
//     wavelen_i > low:          f_i / factor
//     wavelen_i < high:         f_i
//     otherwise (smooth):       (1 - s) f_i / factor + s f_i,
//                               s = (L0 / wavelen_i - low_freq_factor) / (high_freq_factor - low_freq_factor)
//   with L0 = original_max_position_embeddings.
// Sliding layers of models with local_rope_theta use that theta and no scaling.
// Computed in fp64, rounded once to the table's dtype.
#pragma once

#include "core/spec/architecture.h"
#include "core/tensor.h"

#include <vector>

namespace fk::runner {

// The rotary frequencies f_i (rot/2 of them) for a layer of `type`.
std::vector<double> rope_frequencies(const spec::Architecture& a, spec::LayerType type);
// [positions, rot] table in `dtype`.
Tensor rope_cache(const spec::Architecture& a, spec::LayerType type, int64_t positions, DType dtype);

}  // namespace fk::runner
