// Activations, gated (vLLM: silu_and_mul, gelu_and_mul, gelu_tanh_and_mul:
// out[..., d] = act(input[..., :d]) * input[..., d:]) and plain (gelu, gelu_new,
// relu, relu2, silu: out = act(input)). gelu is exact (erf); gelu_new / gelu_tanh use the
// tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); relu2 is the
// squared relu, relu(x)^2 (vLLM's ReLUSquaredActivation: Nemotron, Arcee).
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cmath>
#include <numbers>

namespace fk::kernels {
namespace {

enum class Act { kSilu, kGelu, kGeluTanh, kRelu, kRelu2 };
enum { kOut, kInput };

template <typename F>
F activate(Act a, F x) {
  switch (a) {
    case Act::kSilu: return x / (F(1) + std::exp(-x));
    case Act::kGelu: return F(0.5) * x * (F(1) + std::erf(x / std::sqrt(F(2))));
    case Act::kGeluTanh: {
      const F k = std::sqrt(F(2) / std::numbers::pi_v<F>);
      return F(0.5) * x * (F(1) + std::tanh(k * (x + F(0.044715) * x * x * x)));
    }
    case Act::kRelu: return x > F(0) ? x : F(0);
    case Act::kRelu2:
      return x > F(0) ? x * x : F(0);
  }
  return x;
}

template <typename T>
void act_cpu(const OpCall& c, Act a, bool gated) {
  const int64_t d = c.arg(kOut).size(-1), rows = util::rows(c.arg(kOut));
  const int64_t in_d = gated ? 2 * d : d;
  const T* x = c.arg(kInput).data_as<T>();
  T* out = c.arg(kOut).data_as<T>();
#pragma omp parallel for schedule(static) if (rows * d > 65536)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < d; ++i) {
      const float v = activate<float>(a, cpu::load(x[r * in_d + i]));
      out[r * d + i] = cpu::store<T>(gated ? v * cpu::load(x[r * in_d + d + i]) : v);
    }
  }
}

void register_one(OpRegistry& reg, const std::string& name, Act a, bool gated, const std::string& summary) {
  OpDef d;
  d.name = name;
  d.summary = summary;
  d.args = {{"out", ArgRole::kOut}, {"input", ArgRole::kIn}};
  d.check = [d, gated](const OpCall& c) {
    const int64_t rank = c.arg(kInput).dim();
    std::string e = util::first_error({util::check_tensor(c, d, kInput, rank), util::check_tensor(c, d, kOut, rank),
                                       util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    const int64_t want = gated ? 2 * c.arg(kOut).size(-1) : c.arg(kOut).size(-1);
    if (c.arg(kInput).size(-1) != want || util::rows(c.arg(kInput)) != util::rows(c.arg(kOut)))
      return d.name + ": input must be [..., " + (gated ? "2 x " : "") + "d] for out [..., d]";
    return std::string();
  };
  d.reference = [a, gated](const OpCall& c) {
    const int64_t dd = c.arg(kOut).size(-1), rows = util::rows(c.arg(kOut));
    const int64_t in_d = gated ? 2 * dd : dd;
    const double* x = util::f64(c.arg(kInput));
    double* out = util::f64(c.arg(kOut));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < dd; ++i) {
        const double v = activate<double>(a, x[r * in_d + i]);
        out[r * dd + i] = gated ? v * x[r * in_d + dd + i] : v;
      }
  };
  d.make = [gated](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), dd = s.dim("d");
    return OpCall{{util::output(dt, {t, dd}), util::uniform(dt, {t, gated ? 2 * dd : dd}, rng, "input", -4, 4)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", util::rows(c.arg(kOut))}, {"d", c.arg(kOut).size(-1)}}, c.params};
  };
  d.flops = [](const OpCall& c) { return 8.0 * static_cast<double>(c.arg(kOut).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({name, "cpu", DeviceKind::kCpu, nullptr, [a, gated](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kOut).dtype(), [&](auto tag) { act_cpu<decltype(tag)>(c, a, gated); });
                }});
}

}  // namespace

void register_activations(OpRegistry& reg) {
  register_one(reg, "silu_and_mul", Act::kSilu, true, "SwiGLU: silu(x[:d]) * x[d:]");
  register_one(reg, "gelu_and_mul", Act::kGelu, true, "GeGLU (exact gelu): gelu(x[:d]) * x[d:]");
  register_one(reg, "gelu_tanh_and_mul", Act::kGeluTanh, true, "GeGLU (tanh gelu): gelu_tanh(x[:d]) * x[d:]");
  register_one(reg, "gelu", Act::kGelu, false, "exact (erf) gelu");
  register_one(reg, "gelu_new", Act::kGeluTanh, false, "tanh-approximated gelu (GPT-2's gelu_new)");
  register_one(reg, "relu", Act::kRelu, false, "relu");
  register_one(reg, "relu2", Act::kRelu2, false, "squared relu: relu(x)^2");
  register_one(reg, "silu", Act::kSilu, false, "silu");
}

}  // namespace fk::kernels
