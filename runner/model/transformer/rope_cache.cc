#include "runner/model/transformer/rope_cache.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace fk::runner {

namespace {

bool uses_local_theta(const spec::Architecture& a, spec::LayerType type) {
  return type == spec::LayerType::kSliding && a.position.local_rope_theta.has_value();
}

// YaRN's blend of each frequency f_i = theta^(-2i / rot): the extrapolated f_i where
// a dimension turns more than beta_fast times over the original context, f_i / factor
// where it turns fewer than beta_slow times, and a linear ramp between.
void yarn_blend(const spec::RopeScaling& s, double theta, int64_t rot, std::vector<double>& f) {
  const double l0 = static_cast<double>(s.original_max_position_embeddings);
  const auto dim_of = [&](double rotations) {  // the dimension that turns `rotations` times over l0
    return static_cast<double>(rot) * std::log(l0 / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(theta));
  };
  double low = dim_of(s.beta_fast), high = dim_of(s.beta_slow);
  if (s.truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(rot - 1));
  if (low == high) high += 0.001;  // as HF, against a zero-width ramp
  for (size_t i = 0; i < f.size(); ++i) {
    const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    const double keep = 1.0 - ramp;  // the extrapolated share
    f[i] = (f[i] / s.factor) * (1.0 - keep) + f[i] * keep;
  }
}

// YaRN's m(scale, ms) = 0.1 ms ln(scale) + 1 above scale 1, else 1.
double yarn_mscale(double scale, double ms) { return scale <= 1.0 ? 1.0 : 0.1 * ms * std::log(scale) + 1.0; }

}  // namespace

double rope_attention_factor(const spec::Architecture& a, spec::LayerType type) {
  const auto& s = a.position.rope_scaling;
  if (uses_local_theta(a, type) || s.type != spec::RopeScalingType::kYarn) return 1.0;
  if (s.attention_factor) return *s.attention_factor;
  if (s.mscale != 0.0 && s.mscale_all_dim != 0.0)
    return yarn_mscale(s.factor, s.mscale) / yarn_mscale(s.factor, s.mscale_all_dim);
  return yarn_mscale(s.factor, 1.0);
}

std::vector<double> rope_frequencies(const spec::Architecture& a, spec::LayerType type) {
  const int64_t rot = a.rotary_dim();
  const bool local = uses_local_theta(a, type);
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
  if (!local && s.type == spec::RopeScalingType::kYarn) yarn_blend(s, theta, rot, f);
  return f;
}

Tensor rope_cache(const spec::Architecture& a, spec::LayerType type, int64_t positions, DType dtype) {
  const int64_t rot = a.rotary_dim(), half = rot / 2;
  const auto f = rope_frequencies(a, type);
  const double scale = rope_attention_factor(a, type);
  Tensor table = Tensor::empty(DType::kF64, {positions, rot});
  double* t = table.data_as<double>();
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t i = 0; i < half; ++i) {
      // Angles in fp32 as HF computes them (inv_freq and positions in float32).
      const float angle = static_cast<float>(p) * static_cast<float>(f[static_cast<size_t>(i)]);
      t[p * rot + i] = scale * std::cos(static_cast<double>(angle));
      t[p * rot + half + i] = scale * std::sin(static_cast<double>(angle));
    }
  return table.to_dtype(dtype);
}

}  // namespace fk::runner
