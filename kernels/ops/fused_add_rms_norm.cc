// fused_add_rms_norm (vLLM: fused_add_rms_norm(input, residual, weight, epsilon)):
//   residual = input + residual   (stored in the element type, as vLLM does)
//   input    = rms_norm(residual) * weight
// Both input and residual are overwritten.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cmath>

namespace fk::kernels {
namespace {

enum { kInput, kResidual, kWeight };

template <typename T>
void fused_add_rms_norm_cpu(const OpCall& c) {
  const int64_t h = c.arg(kInput).size(-1), rows = util::rows(c.arg(kInput));
  T* x = c.arg(kInput).data_as<T>();
  T* res = c.arg(kResidual).data_as<T>();
  const T* w = c.arg(kWeight).data_as<T>();
  const float eps = static_cast<float>(c.param(0));
#pragma omp parallel for schedule(static) if (rows * h > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    float ss = 0;
    for (int64_t i = 0; i < h; ++i) {
      const T z = cpu::store<T>(cpu::load(x[r * h + i]) + cpu::load(res[r * h + i]));
      res[r * h + i] = z;
      const float v = cpu::load(z);
      ss += v * v;
    }
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t i = 0; i < h; ++i) x[r * h + i] = cpu::store<T>(cpu::load(res[r * h + i]) * inv * cpu::load(w[i]));
  }
}

}  // namespace

void register_fused_add_rms_norm(OpRegistry& reg) {
  OpDef d;
  d.name = "fused_add_rms_norm";
  d.summary = "residual += input; input = RMSNorm(residual)";
  d.args = {{"input", ArgRole::kInOut}, {"residual", ArgRole::kInOut}, {"weight", ArgRole::kIn}};
  d.params = {"epsilon"};
  d.check = [d](const OpCall& c) {
    return util::first_error({util::check_tensor(c, d, kInput, c.arg(kInput).dim()),
                              util::check_tensor(c, d, kWeight, 1), util::check_same_dtype(c, d),
                              c.arg(kResidual).shape() == c.arg(kInput).shape()
                                  ? ""
                                  : "fused_add_rms_norm: input and residual shapes differ",
                              util::check_dim(c, d, kWeight, 0, c.arg(kInput).size(-1), "hidden size")});
  };
  d.reference = [](const OpCall& c) {
    const int64_t h = c.arg(kInput).size(-1), rows = util::rows(c.arg(kInput));
    double *x = util::f64(c.arg(kInput)), *res = util::f64(c.arg(kResidual));
    const double* w = util::f64(c.arg(kWeight));
    for (int64_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (int64_t i = 0; i < h; ++i) {
        res[r * h + i] += x[r * h + i];
        ss += res[r * h + i] * res[r * h + i];
      }
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(h) + c.param(0));
      for (int64_t i = 0; i < h; ++i) x[r * h + i] = res[r * h + i] * inv * w[i];
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), h = s.dim("hidden");
    return OpCall{{util::uniform(dt, {t, h}, rng, "input", -1, 1), util::uniform(dt, {t, h}, rng, "residual", -2, 2),
                   util::uniform(dt, {h}, rng, "weight", 0.5f, 1.5f)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", util::rows(c.arg(kInput))}, {"hidden", c.arg(kInput).size(-1)}}, c.params};
  };
  d.flops = [](const OpCall& c) { return 5.0 * static_cast<double>(c.arg(kInput).numel()); };
  d.bytes = [](const OpCall& c) { return util::bytes_of(c) + 2.0 * static_cast<double>(c.arg(kInput).nbytes()); };
  reg.add(d);
  reg.add_impl({"fused_add_rms_norm", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kInput).dtype(),
                                      [&](auto tag) { fused_add_rms_norm_cpu<decltype(tag)>(c); });
                }});
}

}  // namespace fk::kernels
