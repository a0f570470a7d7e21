// Test seams (test_seams.h). The environment is read once, on first use.
#include "runner/test_seams.h"

#include "core/rng.h"

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace fk::runner {
namespace {

// op -> amplitude, from "OP:A[,OP:A...]" (malformed entries ignored).
std::map<std::string, double> noise_from_env() {
  std::map<std::string, double> out;
  const char* v = std::getenv("FK_RUNNER_PRECISION_NOISE");
  if (v == nullptr) return out;
  std::string s(v);
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string entry = s.substr(0, comma);
    const size_t colon = entry.rfind(':');
    if (colon != std::string::npos && colon > 0) out[entry.substr(0, colon)] = std::strtod(entry.c_str() + colon + 1, nullptr);
    if (comma == std::string::npos) break;
    s.erase(0, comma + 1);
  }
  return out;
}

const std::map<std::string, double>& noise() {
  static const std::map<std::string, double> n = noise_from_env();
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
  const auto it = noise().find(def.name);
  if (it == noise().end() || it->second == 0) return;
  const double amplitude = it->second;
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
    for (double& x : values) x *= 1.0 + amplitude * static_cast<double>(rng.uniform(counter++, -1.0f, 1.0f));
    dtype_convert(values.data(), DType::kF64, t.data(), t.dtype(), count);
  }
}

}  // namespace fk::runner
