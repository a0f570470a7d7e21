// rms_norm (vLLM: rms_norm(result, input, weight, epsilon)):
//   out[t, :] = input[t, :] / sqrt(mean(input[t, :]^2) + eps) * weight
// fp32 accumulation in the baseline. Gemma's (1 + w) scaling is folded into the
// weight by the model; QK-norm calls it on [tokens * heads, head_dim] views.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cmath>

namespace fk::kernels {
namespace {

enum { kOut, kInput, kWeight };

template <typename T>
void rms_norm_cpu(const OpCall& c) {
  const int64_t h = c.arg(kInput).size(-1), rows = util::rows(c.arg(kInput));
  const T* x = c.arg(kInput).data_as<T>();
  const T* w = c.arg(kWeight).data_as<T>();
  T* out = c.arg(kOut).data_as<T>();
  const float eps = static_cast<float>(c.param(0));
#pragma omp parallel for schedule(static) if (rows * h > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * h;
    float ss = 0;
    for (int64_t i = 0; i < h; ++i) {
      const float v = cpu::load(xr[i]);
      ss += v * v;
    }
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t i = 0; i < h; ++i) out[r * h + i] = cpu::store<T>(cpu::load(xr[i]) * inv * cpu::load(w[i]));
  }
}

}  // namespace

void register_rms_norm(OpRegistry& reg) {
  OpDef d;
  d.name = "rms_norm";
  d.summary = "RMSNorm over the last dimension";
  d.args = {{"result", ArgRole::kOut}, {"input", ArgRole::kIn}, {"weight", ArgRole::kIn}};
  d.params = {"epsilon"};
  d.check = [d](const OpCall& c) {
    return util::first_error({util::check_tensor(c, d, kOut, c.arg(kInput).dim()),
                              util::check_tensor(c, d, kWeight, 1), util::check_same_dtype(c, d),
                              c.arg(kOut).shape() == c.arg(kInput).shape() ? "" : "rms_norm: result and input shapes differ",
                              util::check_dim(c, d, kWeight, 0, c.arg(kInput).size(-1), "hidden size")});
  };
  d.reference = [](const OpCall& c) {
    const int64_t h = c.arg(kInput).size(-1), rows = util::rows(c.arg(kInput));
    const double *x = util::f64(c.arg(kInput)), *w = util::f64(c.arg(kWeight));
    double* out = util::f64(c.arg(kOut));
    for (int64_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (int64_t i = 0; i < h; ++i) ss += x[r * h + i] * x[r * h + i];
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(h) + c.param(0));
      for (int64_t i = 0; i < h; ++i) out[r * h + i] = x[r * h + i] * inv * w[i];
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), h = s.dim("hidden");
    return OpCall{{util::output(dt, {t, h}), util::uniform(dt, {t, h}, rng, "input", -2, 2),
                   util::uniform(dt, {h}, rng, "weight", 0.5f, 1.5f)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", util::rows(c.arg(kInput))}, {"hidden", c.arg(kInput).size(-1)}}, c.params};
  };
  d.flops = [](const OpCall& c) { return 4.0 * static_cast<double>(c.arg(kInput).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"rms_norm", "cpu", DeviceKind::kCpu, nullptr,
                [](const OpCall& c) { cpu::dispatch_float(c.arg(kInput).dtype(), [&](auto tag) {
                    rms_norm_cpu<decltype(tag)>(c); }); }});
}

}  // namespace fk::kernels
