#include "runner/model/transformer/rope_cache.h"

#include <cmath>
#include <numbers>

namespace fk::runner {

std::vector<double> rope_frequencies(const spec::Architecture& a, spec::LayerType type) {
  const int64_t rot = a.rotary_dim();
  const bool local = type == spec::LayerType::kSliding && a.position.local_rope_theta.has_value();
  const double theta = local ? *a.position.local_rope_theta : a.position.rope_theta;
  const auto& s = a.position.rope_scaling;
  std::vector<double> f(static_cast<size_t>(rot / 2));
  for (int64_t i = 0; i < rot / 2; ++i) {
    double fi = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rot));
    if (!local && s.type == spec::RopeScalingType::kLinear) {
      fi /= s.factor;
    } else if (!local && s.type == spec::RopeScalingType::kLlama3) {
      const double l0 = static_cast<double>(s.original_max_position_embeddings);
      const double wavelen = 2.0 * std::numbers::pi / fi;
      const double low = l0 / s.low_freq_factor, high = l0 / s.high_freq_factor;
      if (wavelen > low) {
        fi /= s.factor;
      } else if (wavelen >= high) {
        const double smooth = (l0 / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        fi = (1.0 - smooth) * fi / s.factor + smooth * fi;
      }
    }
    f[static_cast<size_t>(i)] = fi;
  }
  return f;
}

Tensor rope_cache(const spec::Architecture& a, spec::LayerType type, int64_t positions, DType dtype) {
  const int64_t rot = a.rotary_dim(), half = rot / 2;
  const auto f = rope_frequencies(a, type);
  Tensor table = Tensor::empty(DType::kF64, {positions, rot});
  double* t = table.data_as<double>();
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t i = 0; i < half; ++i) {
      // Angles in fp32 as HF computes them (inv_freq and positions in float32).
      const float angle = static_cast<float>(p) * static_cast<float>(f[static_cast<size_t>(i)]);
      t[p * rot + i] = std::cos(static_cast<double>(angle));
      t[p * rot + half + i] = std::sin(static_cast<double>(angle));
    }
  return table.to_dtype(dtype);
}

}  // namespace fk::runner
