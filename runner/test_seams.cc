// Test seams (test_seams.h). The environment is read once, on first use.
#include "runner/test_seams.h"

#include "core/rng.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace fk::runner {
namespace {

struct Noise {
  std::string op;
  double amplitude = 0;
};

Noise noise_from_env() {
  const char* v = std::getenv("FK_RUNNER_PRECISION_NOISE");
  if (v == nullptr) return {};
  const std::string s(v);
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return {};
  return {s.substr(0, colon), std::strtod(s.c_str() + colon + 1, nullptr)};
}

const Noise& noise() {
  static const Noise n = noise_from_env();
  return n;
}

}  // namespace

double seam_slowdown() {
  static const double factor = [] {
    const char* v = std::getenv("FK_RUNNER_SLOWDOWN");
    const double f = v == nullptr ? 1.0 : std::strtod(v, nullptr);
    return f > 1.0 ? f : 1.0;
  }();
  return factor;
}

void seam_stretch(std::chrono::steady_clock::time_point start) {
  const double f = seam_slowdown();
  if (f <= 1.0) return;
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const auto until = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(elapsed * f);
  while (std::chrono::steady_clock::now() < until) {
  }
}

void seam_perturb_outputs(const kernels::OpDef& def, const kernels::OpCall& call) {
  const Noise& n = noise();
  if (n.op.empty() || n.op != def.name || n.amplitude == 0) return;
  const RngStream rng(0x5eedu, "fk-runner.precision-noise");
  uint64_t counter = 0;
  for (size_t i = 0; i < call.args.size() && i < def.args.size(); ++i) {
    const Tensor& t = call.args[i];
    if (def.args[i].role == kernels::ArgRole::kIn || !def.args[i].float_typed || !t.defined() ||
        !t.is_contiguous() || !dtype_is_float(t.dtype()))
      continue;
    const auto count = static_cast<size_t>(t.numel());
    std::vector<double> values(count);
    dtype_convert(t.data(), t.dtype(), values.data(), DType::kF64, count);
    for (double& x : values) x *= 1.0 + n.amplitude * static_cast<double>(rng.uniform(counter++, -1.0f, 1.0f));
    dtype_convert(values.data(), DType::kF64, t.data(), t.dtype(), count);
  }
}

}  // namespace fk::runner
