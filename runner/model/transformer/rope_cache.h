// The cos/sin table of rotary embeddings, as vLLM's RotaryEmbedding builds it:
// row p holds cos(p * f_i) for i < rot/2, then sin(p * f_i), with frequencies
//   f_i = theta^(-2i / rot), divided by `factor` for linear scaling, and llama3
//   scaling (HF transformers' _compute_llama3_parameters, published with Llama 3.1):
//     wavelen_i = 2 pi / f_i; low = L0 / low_freq_factor; high = L0 / high_freq_factor
//     wavelen_i > low:          f_i / factor
//     wavelen_i < high:         f_i
//     otherwise (smooth):       (1 - s) f_i / factor + s f_i,
//                               s = (L0 / wavelen_i - low_freq_factor) / (high_freq_factor - low_freq_factor)
//   with L0 = original_max_position_embeddings; and yarn scaling (YaRN, arXiv 2309.00071,
//   as HF transformers' _compute_yarn_parameters computes it):
//     d(n) = rot ln(L0 / (2 pi n)) / (2 ln theta)   the dimension turning n times over L0
//     low = d(beta_fast), high = d(beta_slow) (floored and ceiled when truncate), clamped
//     to [0, rot - 1]; r_i = clamp((i - low) / (high - low), 0, 1)
//     f_i -> r_i f_i / factor + (1 - r_i) f_i
//   and both cos and sin multiplied by the attention factor (rope_attention_factor).
// Sliding layers of models with local_rope_theta use that theta and no scaling.
// Computed in fp64, rounded once to the table's dtype.
#pragma once

#include "core/spec/architecture.h"
#include "core/tensor.h"

#include <vector>

namespace fk::runner {

// The factor yarn scaling multiplies cos and sin by (1 otherwise): attention_factor when
// set, else m(factor, mscale) / m(factor, mscale_all_dim) when both mscales are, else
// m(factor, 1), with m(s, k) = 0.1 k ln(s) + 1 for s > 1 and 1 below.
double rope_attention_factor(const spec::Architecture& a, spec::LayerType type);
// The rotary frequencies f_i (rot/2 of them) for a layer of `type`.
std::vector<double> rope_frequencies(const spec::Architecture& a, spec::LayerType type);
// [positions, rot] table in `dtype`.
Tensor rope_cache(const spec::Architecture& a, spec::LayerType type, int64_t positions, DType dtype);

}  // namespace fk::runner
