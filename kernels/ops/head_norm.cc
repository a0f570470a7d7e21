// head_norm: a norm of each head of a row, each head with its own weight (and bias):
//   out[t, h*D : (h+1)*D] = norm(x[t, h*D : (h+1)*D]) * weight[h*D : (h+1)*D] (+ bias[...])
// over rows of H heads of D elements (x and out [tokens, H * D], weight and bias
// [H * D]). kind 0: RMSNorm (x / sqrt(mean(x^2) + eps)); kind 1: LayerNorm
// ((x - mean) / sqrt(var + eps), biased variance). The q/k norms of Cohere
// (use_qk_norm) and StableLM (qk_layernorm), whose weights are [heads, head_dim]. fp32
// accumulation, one rounding of each output.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <fmt/format.h>

#include <cmath>

namespace fk::kernels {
namespace {

enum { kOut, kInput, kWeight, kBias };
enum { kEps, kHeadDim, kKind };

template <typename T>
void head_norm_cpu(const OpCall& c) {
  const int64_t n = c.arg(kInput).size(-1), rows = util::rows(c.arg(kInput));
  const auto d = static_cast<int64_t>(c.param(kHeadDim));
  const bool layer = c.param(kKind) != 0.0;
  const T* x = c.arg(kInput).data_as<T>();
  const T* w = c.arg(kWeight).data_as<T>();
  const T* b = c.arg(kBias).defined() ? c.arg(kBias).data_as<T>() : nullptr;
  T* out = c.arg(kOut).data_as<T>();
  const float eps = static_cast<float>(c.param(kEps));
  const int64_t pieces = rows * (n / d);
#pragma omp parallel for schedule(static) if (rows * n > 65536)
  for (int64_t p = 0; p < pieces; ++p) {
    const int64_t at = p * d, col = at % n;  // the head's first element, and its column
    float mean = 0;
    if (layer) {
      for (int64_t i = 0; i < d; ++i) mean += cpu::load(x[at + i]);
      mean /= static_cast<float>(d);
    }
    float ss = 0;
    for (int64_t i = 0; i < d; ++i) {
      const float v = cpu::load(x[at + i]) - mean;
      ss += v * v;
    }
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(d) + eps);
    for (int64_t i = 0; i < d; ++i) {
      const float y = (cpu::load(x[at + i]) - mean) * inv * cpu::load(w[col + i]);
      out[at + i] = cpu::store<T>(b != nullptr ? y + cpu::load(b[col + i]) : y);
    }
  }
}

}  // namespace

void register_head_norm(OpRegistry& reg) {
  OpDef d;
  d.name = "head_norm";
  d.summary = "RMSNorm or LayerNorm of each head of a row, each head with its own weight (and bias)";
  d.args = {{"result", ArgRole::kOut},
            {"input", ArgRole::kIn},
            {"weight", ArgRole::kIn},
            {"bias", ArgRole::kIn, true, /*optional=*/true}};
  d.params = {"epsilon", "head_dim", "kind"};
  d.check = [d](const OpCall& c) {
    if (c.params.size() != 3) return std::string("head_norm: expected 3 params (epsilon, head_dim, kind)");
    const double hd = c.param(kHeadDim), kind = c.param(kKind);
    const int64_t n = c.arg(kInput).defined() && c.arg(kInput).dim() >= 1 ? c.arg(kInput).size(-1) : 0;
    std::string e = util::first_error({util::check_tensor(c, d, kInput, 2), util::check_tensor(c, d, kOut, 2),
                                       util::check_tensor(c, d, kWeight, 1), util::check_tensor(c, d, kBias, 1),
                                       util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    if (c.arg(kOut).shape() != c.arg(kInput).shape()) return std::string("head_norm: result and input shapes differ");
    if (!(hd >= 1) || hd != std::floor(hd) || n % static_cast<int64_t>(hd) != 0)
      return fmt::format("head_norm: head_dim {} does not divide the row ({})", hd, n);
    if (kind != 0.0 && kind != 1.0) return fmt::format("head_norm: kind {} is not 0 (RMSNorm) or 1 (LayerNorm)", kind);
    if (kind == 0.0 && c.arg(kBias).defined()) return std::string("head_norm: an RMSNorm (kind 0) takes no bias");
    return util::first_error({util::check_dim(c, d, kWeight, 0, n, "row length"),
                              c.arg(kBias).defined() ? util::check_dim(c, d, kBias, 0, n, "row length") : ""});
  };
  d.reference = [](const OpCall& c) {
    const int64_t n = c.arg(kInput).size(-1), rows = util::rows(c.arg(kInput));
    const auto hd = static_cast<int64_t>(c.param(kHeadDim));
    const bool layer = c.param(kKind) != 0.0;
    const double *x = util::f64(c.arg(kInput)), *w = util::f64(c.arg(kWeight));
    const double* b = c.arg(kBias).defined() ? util::f64(c.arg(kBias)) : nullptr;
    double* out = util::f64(c.arg(kOut));
    for (int64_t at = 0; at < rows * n; at += hd) {
      const int64_t col = at % n;
      double mean = 0, ss = 0;
      if (layer) {
        for (int64_t i = 0; i < hd; ++i) mean += x[at + i];
        mean /= static_cast<double>(hd);
      }
      for (int64_t i = 0; i < hd; ++i) ss += (x[at + i] - mean) * (x[at + i] - mean);
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(hd) + c.param(kEps));
      for (int64_t i = 0; i < hd; ++i)
        out[at + i] = (x[at + i] - mean) * inv * w[col + i] + (b != nullptr ? b[col + i] : 0.0);
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), n = s.dim("heads") * s.dim("head_dim");
    const bool bias = s.params.size() > 2 && s.params[2] != 0.0 && s.dim("bias") != 0;
    return OpCall{{util::output(dt, {t, n}), util::uniform(dt, {t, n}, rng, "input", -2, 2),
                   util::uniform(dt, {n}, rng, "weight", 0.5f, 1.5f),
                   bias ? util::uniform(dt, {n}, rng, "bias", -0.5f, 0.5f) : Tensor()},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const auto hd = static_cast<int64_t>(c.param(kHeadDim));
    return OpShape{{{"tokens", util::rows(c.arg(kInput))},
                    {"heads", c.arg(kInput).size(-1) / hd},
                    {"head_dim", hd},
                    {"bias", c.arg(kBias).defined() ? 1 : 0}},
                   c.params};
  };
  d.flops = [](const OpCall& c) { return 7.0 * static_cast<double>(c.arg(kInput).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"head_norm", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kInput).dtype(), [&](auto tag) { head_norm_cpu<decltype(tag)>(c); });
                }});
}

}  // namespace fk::kernels
