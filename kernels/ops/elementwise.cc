// Small elementwise ops the model needs around the big ones:
//   add(out, a, b):          out = a + b (out may be a: in place)
//   scale(x, factor):        x = x * factor, in place (Gemma's embedding normaliser)
//   softcap(x, cap):         x = cap * tanh(x / cap), in place (Gemma 2 final logits)
//   argmax(ids, input):      ids[t] = first index of the maximum of input[t, :] (int64)
//   sigmoid_gate(x, gate):   x[t, :] = x[t, :] * sigmoid(gate[t]), in place (Qwen2-MoE's
//                            shared-expert gate, vLLM: F.sigmoid(gate(x)) * shared(x))
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cmath>

namespace fk::kernels {
namespace {

template <typename T>
void add_cpu(const OpCall& c) {
  const int64_t n = c.arg(0).numel();
  T* out = c.arg(0).data_as<T>();
  const T* a = c.arg(1).data_as<T>();
  const T* b = c.arg(2).data_as<T>();
#pragma omp parallel for schedule(static) if (n > 262144)
  for (int64_t i = 0; i < n; ++i) out[i] = cpu::store<T>(cpu::load(a[i]) + cpu::load(b[i]));
}

template <typename T>
void map_cpu(const OpCall& c, bool is_softcap) {
  const int64_t n = c.arg(0).numel();
  T* x = c.arg(0).data_as<T>();
  const float p = static_cast<float>(c.param(0));
#pragma omp parallel for schedule(static) if (n > 262144)
  for (int64_t i = 0; i < n; ++i) {
    const float v = cpu::load(x[i]);
    x[i] = cpu::store<T>(is_softcap ? p * std::tanh(v / p) : v * p);
  }
}

template <typename T>
void argmax_cpu(const OpCall& c) {
  const int64_t t = c.arg(1).size(0), v = c.arg(1).size(1);
  const T* x = c.arg(1).data_as<T>();
  int64_t* ids = c.arg(0).data_as<int64_t>();
#pragma omp parallel for schedule(static) if (t * v > 262144)
  for (int64_t r = 0; r < t; ++r) {
    int64_t best = 0;
    float bv = cpu::load(x[r * v]);
    for (int64_t j = 1; j < v; ++j)
      if (cpu::load(x[r * v + j]) > bv) bv = cpu::load(x[r * v + (best = j)]);
    ids[r] = best;
  }
}

template <typename T>
void sigmoid_gate_cpu(const OpCall& c) {
  const int64_t t = c.arg(0).size(0), h = c.arg(0).size(1);
  T* x = c.arg(0).data_as<T>();
  const T* g = c.arg(1).data_as<T>();
#pragma omp parallel for schedule(static) if (t * h > 262144)
  for (int64_t r = 0; r < t; ++r) {
    const float s = 1.0f / (1.0f + std::exp(-cpu::load(g[r])));
    for (int64_t j = 0; j < h; ++j) x[r * h + j] = cpu::store<T>(cpu::load(x[r * h + j]) * s);
  }
}

OpShape flat_shape(const OpCall& c) { return OpShape{{{"elements", c.arg(0).numel()}}, c.params}; }

void register_add(OpRegistry& reg) {
  OpDef d;
  d.name = "add";
  d.summary = "out = a + b (residual add)";
  d.args = {{"out", ArgRole::kOut}, {"a", ArgRole::kIn}, {"b", ArgRole::kIn}};
  d.check = [d](const OpCall& c) {
    std::string e = util::check_same_dtype(c, d);
    if (!e.empty()) return e;
    if (c.arg(0).shape() != c.arg(1).shape() || c.arg(1).shape() != c.arg(2).shape())
      return std::string("add: out, a and b shapes differ");
    if (!c.arg(0).is_contiguous() || !c.arg(1).is_contiguous() || !c.arg(2).is_contiguous())
      return std::string("add: tensors must be contiguous");
    return std::string();
  };
  d.reference = [](const OpCall& c) {
    for (int64_t i = 0; i < c.arg(0).numel(); ++i) util::f64(c.arg(0))[i] = util::f64(c.arg(1))[i] + util::f64(c.arg(2))[i];
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t n = s.dim("elements");
    return OpCall{{util::output(dt, {n}), util::uniform(dt, {n}, rng, "a", -2, 2), util::uniform(dt, {n}, rng, "b", -2, 2)},
                  s.params};
  };
  d.shape_of = flat_shape;
  d.flops = [](const OpCall& c) { return static_cast<double>(c.arg(0).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"add", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(0).dtype(), [&](auto tag) { add_cpu<decltype(tag)>(c); });
                }});
}

void register_map(OpRegistry& reg, const std::string& name, bool is_softcap) {
  OpDef d;
  d.name = name;
  d.summary = is_softcap ? "x = cap * tanh(x / cap), in place" : "x = x * factor, in place";
  d.args = {{"x", ArgRole::kInOut}};
  d.params = {is_softcap ? "cap" : "factor"};
  d.check = [d, is_softcap](const OpCall& c) {
    std::string e = util::check_same_dtype(c, d);
    if (!e.empty()) return e;
    if (!c.arg(0).is_contiguous()) return d.name + ": x must be contiguous";
    if (is_softcap && !(c.param(0) > 0)) return d.name + ": cap must be > 0";
    return std::string();
  };
  d.reference = [is_softcap](const OpCall& c) {
    double* x = util::f64(c.arg(0));
    const double p = c.param(0);
    for (int64_t i = 0; i < c.arg(0).numel(); ++i) x[i] = is_softcap ? p * std::tanh(x[i] / p) : x[i] * p;
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    return OpCall{{util::uniform(dt, {s.dim("elements")}, rng, "x", -60, 60)}, s.params};
  };
  d.shape_of = flat_shape;
  d.flops = [](const OpCall& c) { return static_cast<double>(c.arg(0).numel()); };
  d.bytes = [](const OpCall& c) { return 2.0 * static_cast<double>(c.arg(0).nbytes()); };
  reg.add(d);
  reg.add_impl({name, "cpu", DeviceKind::kCpu, nullptr, [is_softcap](const OpCall& c) {
                  cpu::dispatch_float(c.arg(0).dtype(), [&](auto tag) { map_cpu<decltype(tag)>(c, is_softcap); });
                }});
}

void register_argmax(OpRegistry& reg) {
  OpDef d;
  d.name = "argmax";
  d.summary = "ids[t] = index of the first maximum of input[t, :]";
  d.args = {{"ids", ArgRole::kOut, false}, {"input", ArgRole::kIn}};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, 0, 1, {DType::kI64}), util::check_tensor(c, d, 1, 2)});
    if (!e.empty()) return e;
    return util::check_dim(c, d, 0, 0, c.arg(1).size(0), "tokens");
  };
  d.reference = [](const OpCall& c) {
    const int64_t t = c.arg(1).size(0), v = c.arg(1).size(1);
    const double* x = util::f64(c.arg(1));
    for (int64_t r = 0; r < t; ++r) {
      int64_t best = 0;
      for (int64_t j = 1; j < v; ++j)
        if (x[r * v + j] > x[r * v + best]) best = j;
      c.arg(0).data_as<int64_t>()[r] = best;
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), v = s.dim("vocab");
    return OpCall{{util::output(DType::kI64, {t}), util::uniform(dt, {t, v}, rng, "input", -8, 8)}, s.params};
  };
  d.shape_of = [](const OpCall& c) { return OpShape{{{"tokens", c.arg(1).size(0)}, {"vocab", c.arg(1).size(1)}}, c.params}; };
  d.flops = [](const OpCall& c) { return static_cast<double>(c.arg(1).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"argmax", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(1).dtype(), [&](auto tag) { argmax_cpu<decltype(tag)>(c); });
                }});
}

}  // namespace

void register_sigmoid_gate(OpRegistry& reg) {
  OpDef d;
  d.name = "sigmoid_gate";
  d.summary = "x[t, :] = x[t, :] * sigmoid(gate[t]), in place (a gated shared expert)";
  d.args = {{"x", ArgRole::kInOut}, {"gate", ArgRole::kIn}};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error(
        {util::check_tensor(c, d, 0, 2), util::check_tensor(c, d, 1, 2), util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    return util::first_error({util::check_dim(c, d, 1, 0, c.arg(0).size(0), "tokens"),
                              util::check_dim(c, d, 1, 1, 1, "1 (one gate per token)")});
  };
  d.reference = [](const OpCall& c) {
    const int64_t t = c.arg(0).size(0), h = c.arg(0).size(1);
    double* x = util::f64(c.arg(0));
    const double* g = util::f64(c.arg(1));
    for (int64_t r = 0; r < t; ++r) {
      const double s = 1.0 / (1.0 + std::exp(-g[r]));
      for (int64_t j = 0; j < h; ++j) x[r * h + j] *= s;
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), h = s.dim("hidden");
    return OpCall{{util::uniform(dt, {t, h}, rng, "x", -4, 4), util::uniform(dt, {t, 1}, rng, "gate", -6, 6)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", c.arg(0).size(0)}, {"hidden", c.arg(0).size(1)}}, c.params};
  };
  d.flops = [](const OpCall& c) { return static_cast<double>(c.arg(0).numel()); };
  d.bytes = [](const OpCall& c) { return 2.0 * static_cast<double>(c.arg(0).nbytes()) + c.arg(1).nbytes(); };
  reg.add(d);
  reg.add_impl({"sigmoid_gate", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(0).dtype(), [&](auto tag) { sigmoid_gate_cpu<decltype(tag)>(c); });
                }});
}

void register_elementwise(OpRegistry& reg) {
  register_add(reg);
  register_map(reg, "scale", false);
  register_map(reg, "softcap", true);
  register_argmax(reg);
  register_sigmoid_gate(reg);
}

}  // namespace fk::kernels
