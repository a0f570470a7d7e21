// layer_norm: out[t, :] = (x - mean) / sqrt(var + eps) * weight + bias, over the last
// dimension (biased variance, as torch.nn.LayerNorm). fp32 accumulation.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cmath>

namespace fk::kernels {
namespace {

enum { kOut, kInput, kWeight, kBias };

template <typename T>
void layer_norm_cpu(const OpCall& c) {
  const int64_t h = c.arg(kInput).size(-1), rows = util::rows(c.arg(kInput));
  const T* x = c.arg(kInput).data_as<T>();
  const T* w = c.arg(kWeight).data_as<T>();
  const T* b = c.arg(kBias).data_as<T>();
  T* out = c.arg(kOut).data_as<T>();
  const float eps = static_cast<float>(c.param(0));
#pragma omp parallel for schedule(static) if (rows * h > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * h;
    float sum = 0;
    for (int64_t i = 0; i < h; ++i) sum += cpu::load(xr[i]);
    const float mean = sum / static_cast<float>(h);
    float var = 0;
    for (int64_t i = 0; i < h; ++i) {
      const float dv = cpu::load(xr[i]) - mean;
      var += dv * dv;
    }
    const float inv = 1.0f / std::sqrt(var / static_cast<float>(h) + eps);
    for (int64_t i = 0; i < h; ++i)
      out[r * h + i] = cpu::store<T>((cpu::load(xr[i]) - mean) * inv * cpu::load(w[i]) + cpu::load(b[i]));
  }
}

}  // namespace

void register_layer_norm(OpRegistry& reg) {
  OpDef d;
  d.name = "layer_norm";
  d.summary = "LayerNorm over the last dimension, with weight and bias";
  d.args = {{"result", ArgRole::kOut}, {"input", ArgRole::kIn}, {"weight", ArgRole::kIn}, {"bias", ArgRole::kIn}};
  d.params = {"epsilon"};
  d.check = [d](const OpCall& c) {
    return util::first_error({util::check_tensor(c, d, kOut, c.arg(kInput).dim()),
                              util::check_tensor(c, d, kWeight, 1), util::check_tensor(c, d, kBias, 1),
                              util::check_same_dtype(c, d),
                              c.arg(kOut).shape() == c.arg(kInput).shape() ? "" : "layer_norm: result and input shapes differ",
                              util::check_dim(c, d, kWeight, 0, c.arg(kInput).size(-1), "hidden size"),
                              util::check_dim(c, d, kBias, 0, c.arg(kInput).size(-1), "hidden size")});
  };
  d.reference = [](const OpCall& c) {
    const int64_t h = c.arg(kInput).size(-1), rows = util::rows(c.arg(kInput));
    const double *x = util::f64(c.arg(kInput)), *w = util::f64(c.arg(kWeight)), *b = util::f64(c.arg(kBias));
    double* out = util::f64(c.arg(kOut));
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < h; ++i) mean += x[r * h + i];
      mean /= static_cast<double>(h);
      for (int64_t i = 0; i < h; ++i) var += (x[r * h + i] - mean) * (x[r * h + i] - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(h) + c.param(0));
      for (int64_t i = 0; i < h; ++i) out[r * h + i] = (x[r * h + i] - mean) * inv * w[i] + b[i];
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), h = s.dim("hidden");
    return OpCall{{util::output(dt, {t, h}), util::uniform(dt, {t, h}, rng, "input", -2, 2),
                   util::uniform(dt, {h}, rng, "weight", 0.5f, 1.5f), util::uniform(dt, {h}, rng, "bias", -0.5f, 0.5f)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", util::rows(c.arg(kInput))}, {"hidden", c.arg(kInput).size(-1)}}, c.params};
  };
  d.flops = [](const OpCall& c) { return 7.0 * static_cast<double>(c.arg(kInput).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"layer_norm", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kInput).dtype(), [&](auto tag) { layer_norm_cpu<decltype(tag)>(c); });
                }});
}

}  // namespace fk::kernels
