// How the transformer family lays out one layer's tensors on a rank: LayerGen plans the
// blocks of HF-named global tensors that make each of the rank's tensors (weight_plan.h)
// and makes them with its WeightMaker. weights.cc lays out the norms, the MLP and the
// MoE; each mixer (mixer.h) its own tensors, in its own file.
#pragma once

#include "core/spec/architecture.h"
#include "runner/model/placement.h"
#include "runner/model/weight_plan.h"

#include <fmt/format.h>

#include <string>

namespace fk::runner {

struct LayerGen {
  const spec::Architecture& a;
  const Placement& pl;
  WeightMaker make;

  Planned draw(const std::string& name, int64_t rows_total, int64_t cols_total, int64_t r0, int64_t nr, int64_t c0,
               int64_t nc, float lo, float hi, float add = 0) const {
    return plan_block(name, rows_total, cols_total, r0, nr, c0, nc, lo, hi, add);
  }
  Planned draw_vector(const std::string& name, int64_t n, float lo, float hi, float add = 0) const {
    return plan_vector(name, n, 0, n, lo, hi, add);
  }

  // "model.layers.<l>.<rest>": HF's name of a layer's tensor.
  std::string layer_name(int64_t l, const std::string& rest) const {
    return fmt::format("model.layers.{}.{}", l, rest);
  }

  // A norm weight of n elements (a q/k norm's), as stored: Gemma's (1 + w) form gets the
  // offset folded in, so the op multiplies by the tensor.
  Planned scale(const std::string& name, int64_t n) const {
    const float c = a.norm.weight_offset != 0 ? 0.0f : 1.0f;  // Gemma stores w in (1 + w)
    return draw_vector(name, n, c - 0.2f, c + 0.2f, static_cast<float>(a.norm.weight_offset));
  }
  // A hidden-size norm's weight; 1 everywhere, read from no checkpoint, under norm.weight
  // false (OLMo's non-parametric LayerNorm).
  Planned norm(const std::string& name) const {
    if (!a.norm.weight) return Planned{{a.hidden_size}, {}, 1.0f};
    return scale(name, a.hidden_size);
  }
  // A LayerNorm's bias of n elements (the hidden size, or a q/k head's); without one
  // (norm.bias false, Cohere) a zero one, read from no checkpoint: the same op, and
  // x * w + 0 is x * w.
  Planned norm_bias(const std::string& name, int64_t n) const {
    if (!a.norm.bias) return Planned{{n}, {}};
    return draw_vector(name, n, -0.1f, 0.1f);
  }
  Planned norm_bias(const std::string& name) const { return norm_bias(name, a.hidden_size); }

  // Column-parallel rows [begin, begin + count) of a [rows_total, fan_in] projection.
  Planned rows(const std::string& name, int64_t rows_total, int64_t begin, int64_t count, int64_t fan_in) const {
    const float b = linear_bound(fan_in);
    return draw(name, rows_total, fan_in, begin, count, 0, fan_in, -b, b);
  }
  Planned bias_rows(const std::string& name, int64_t total, int64_t begin, int64_t count) const {
    return plan_vector(name, total, begin, count, -0.1f, 0.1f);
  }
  // Row-parallel columns [begin, begin + count) of a [H, cols_total] projection.
  Planned cols(const std::string& name, int64_t cols_total, int64_t begin, int64_t count) const {
    const float b = linear_bound(cols_total);
    return draw(name, a.hidden_size, cols_total, 0, a.hidden_size, begin, count, -b, b);
  }
};

}  // namespace fk::runner
