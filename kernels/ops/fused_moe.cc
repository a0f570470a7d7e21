// fused_moe: the routed experts of an MoE layer (vLLM's fused_experts semantics):
//   out[t] = sum_i topk_weights[t, i] * expert_{topk_ids[t, i]}(hidden[t])
//   expert_e(x) = (act(x @ w13[e, :I]^T) * (x @ w13[e, I:]^T)) @ w2[e]^T
// with w13 [E, 2 I, H] (gate rows then up rows) and w2 [E, H, I]. Under tensor
// parallelism each rank holds an I-slice of every expert and the partial outputs are
// summed over TP ranks by the caller. activation: 0 silu, 1 gelu_tanh, 2 gelu, each
// act(gate) * up; 3 swiglu_oai (gpt-oss; vLLM's swigluoai_and_mul), with g = min(gate,
// limit) and u = clamp(up, -limit, limit): (u + 1) * g * sigmoid(alpha * g). Optional
// biases (gpt-oss): w13_bias [E, 2 I] is added to the gate/up products before the
// activation, w2_bias [E, H] to each expert's output before its routing weight; under TP
// the caller passes w2_bias on one rank only.
// CPU baseline: tokens grouped by expert, two sgemm per expert (fp32).
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cblas.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace fk::kernels {
namespace {

enum { kOut, kHidden, kW13, kW2, kWeights, kIds, kB13, kB2 };
enum { kActivation, kAlpha, kLimit };

// The gated pair's value: act(gate) * up, or gpt-oss' clamped SwiGLU (kind 3).
template <typename F>
F gated(int kind, F gate, F up, F alpha, F limit);

template <typename F>
F act(int kind, F x) {
  if (kind == 0) return x / (F(1) + std::exp(-x));
  if (kind == 1) {
    const F k = std::sqrt(F(2) / std::numbers::pi_v<F>);
    return F(0.5) * x * (F(1) + std::tanh(k * (x + F(0.044715) * x * x * x)));
  }
  return F(0.5) * x * (F(1) + std::erf(x / std::sqrt(F(2))));
}

template <typename F>
F gated(int kind, F gate, F up, F alpha, F limit) {
  if (kind != 3) return act<F>(kind, gate) * up;
  const F g = std::min(gate, limit), u = std::min(std::max(up, -limit), limit);
  return (u + F(1)) * g / (F(1) + std::exp(-alpha * g));
}

template <typename T>
void widen(const T* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = cpu::load(src[i]);
}

template <typename T>
void fused_moe_cpu(const OpCall& c) {
  const int64_t t = c.arg(kHidden).size(0), h = c.arg(kHidden).size(1);
  const int64_t e = c.arg(kW13).size(0), inter = c.arg(kW13).size(1) / 2, k = c.arg(kIds).size(1);
  const T* x = c.arg(kHidden).data_as<T>();
  const T* w13 = c.arg(kW13).data_as<T>();
  const T* w2 = c.arg(kW2).data_as<T>();
  const float* tw = c.arg(kWeights).data_as<float>();
  const int32_t* ids = c.arg(kIds).data_as<int32_t>();
  const int kind = static_cast<int>(c.iparam(kActivation));
  const auto alpha = static_cast<float>(c.param(kAlpha)), limit = static_cast<float>(c.param(kLimit));
  const T* b13 = util::present(c.arg(kB13)) ? c.arg(kB13).data_as<T>() : nullptr;
  const T* b2 = util::present(c.arg(kB2)) ? c.arg(kB2).data_as<T>() : nullptr;
  std::vector<float> acc(static_cast<size_t>(t * h), 0.0f);
  std::vector<std::vector<std::pair<int64_t, float>>> routed(static_cast<size_t>(e));
  for (int64_t r = 0; r < t; ++r)
    for (int64_t i = 0; i < k; ++i) {
      const int32_t ex = ids[r * k + i];
      if (ex < 0 || ex >= e)  // ids come from a router (maybe a candidate's): never index out of range
        fail(ErrorKind::kInvalidArgument, "fused_moe: topk_ids[{}, {}] = {} is not an expert id (0..{})", r, i, ex, e - 1);
      routed[static_cast<size_t>(ex)].push_back({r, tw[r * k + i]});
    }
  std::vector<float> xa, wa(static_cast<size_t>(2 * inter * h)), wb(static_cast<size_t>(h * inter)), gu, mid, y;
  for (int64_t ex = 0; ex < e; ++ex) {
    const auto& rows = routed[static_cast<size_t>(ex)];
    const auto m = static_cast<int64_t>(rows.size());
    if (m == 0) continue;
    xa.resize(static_cast<size_t>(m * h));
    for (int64_t i = 0; i < m; ++i) widen(x + rows[static_cast<size_t>(i)].first * h, xa.data() + i * h, h);
    widen(w13 + ex * 2 * inter * h, wa.data(), 2 * inter * h);
    widen(w2 + ex * h * inter, wb.data(), h * inter);
    gu.resize(static_cast<size_t>(m * 2 * inter));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(2 * inter),
                static_cast<int>(h), 1.0f, xa.data(), static_cast<int>(h), wa.data(), static_cast<int>(h), 0.0f,
                gu.data(), static_cast<int>(2 * inter));
    mid.resize(static_cast<size_t>(m * inter));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < inter; ++j) {
        // Round the activation product to the element type, as a kernel storing it would.
        float g = gu[static_cast<size_t>(i * 2 * inter + j)], u = gu[static_cast<size_t>(i * 2 * inter + inter + j)];
        if (b13 != nullptr) g += cpu::load(b13[ex * 2 * inter + j]), u += cpu::load(b13[ex * 2 * inter + inter + j]);
        const float v = gated<float>(kind, g, u, alpha, limit);
        mid[static_cast<size_t>(i * inter + j)] = cpu::load(cpu::store<T>(v));
      }
    y.resize(static_cast<size_t>(m * h));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(h),
                static_cast<int>(inter), 1.0f, mid.data(), static_cast<int>(inter), wb.data(), static_cast<int>(inter),
                0.0f, y.data(), static_cast<int>(h));
    for (int64_t i = 0; i < m; ++i) {
      const auto [row, w] = rows[static_cast<size_t>(i)];
      for (int64_t j = 0; j < h; ++j)
        acc[static_cast<size_t>(row * h + j)] +=
            w * (y[static_cast<size_t>(i * h + j)] + (b2 != nullptr ? cpu::load(b2[ex * h + j]) : 0.0f));
    }
  }
  T* out = c.arg(kOut).data_as<T>();
  for (int64_t i = 0; i < t * h; ++i) out[i] = cpu::store<T>(acc[static_cast<size_t>(i)]);
}

}  // namespace

void register_fused_moe(OpRegistry& reg) {
  OpDef d;
  d.name = "fused_moe";
  d.summary = "routed MoE experts: weighted sum of gated-MLP experts chosen per token";
  d.args = {{"out", ArgRole::kOut},
            {"hidden_states", ArgRole::kIn},
            {"w13", ArgRole::kIn},
            {"w2", ArgRole::kIn},
            {"topk_weights", ArgRole::kIn, true, false, true},
            {"topk_ids", ArgRole::kIn, false},
            {"w13_bias", ArgRole::kIn, true, true},
            {"w2_bias", ArgRole::kIn, true, true}};
  d.params = {"activation", "swiglu_alpha", "swiglu_limit"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error(
        {util::check_tensor(c, d, kOut, 2), util::check_tensor(c, d, kHidden, 2), util::check_tensor(c, d, kW13, 3),
         util::check_tensor(c, d, kW2, 3), util::check_tensor(c, d, kWeights, 2, {DType::kF32, DType::kF64}),
         util::check_tensor(c, d, kIds, 2, {DType::kI32}), util::check_tensor(c, d, kB13, 2),
         util::check_tensor(c, d, kB2, 2), util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    if (c.params.size() != 3)
      return std::string("fused_moe: expects 3 parameters (activation, swiglu_alpha, swiglu_limit)");
    if (c.iparam(kActivation) < 0 || c.iparam(kActivation) > 3)
      return std::string("fused_moe: activation must be 0 (silu), 1 (gelu_tanh), 2 (gelu) or 3 (swiglu_oai)");
    const int64_t h = c.arg(kHidden).size(1), ex = c.arg(kW13).size(0), inter2 = c.arg(kW13).size(1);
    if (c.arg(kOut).shape() != c.arg(kHidden).shape()) return std::string("fused_moe: out and hidden shapes differ");
    if (c.arg(kW13).size(2) != h || inter2 % 2 != 0) return std::string("fused_moe: w13 must be [E, 2 I, H]");
    if (c.arg(kW2).size(0) != ex || c.arg(kW2).size(1) != h || c.arg(kW2).size(2) != inter2 / 2)
      return std::string("fused_moe: w2 must be [E, H, I]");
    if (c.arg(kIds).shape() != c.arg(kWeights).shape() || c.arg(kIds).size(0) != c.arg(kHidden).size(0))
      return std::string("fused_moe: topk_weights/ids must be [T, k]");
    if (util::present(c.arg(kB13)) && (c.arg(kB13).size(0) != ex || c.arg(kB13).size(1) != inter2))
      return std::string("fused_moe: w13_bias must be [E, 2 I]");
    if (util::present(c.arg(kB2)) && (c.arg(kB2).size(0) != ex || c.arg(kB2).size(1) != h))
      return std::string("fused_moe: w2_bias must be [E, H]");
    return std::string();
  };
  d.reference = [](const OpCall& c) {
    const int64_t t = c.arg(kHidden).size(0), h = c.arg(kHidden).size(1);
    const int64_t inter = c.arg(kW13).size(1) / 2, k = c.arg(kIds).size(1);
    const double *x = util::f64(c.arg(kHidden)), *w13 = util::f64(c.arg(kW13)), *w2 = util::f64(c.arg(kW2));
    const double* tw = util::f64(c.arg(kWeights));
    const int32_t* ids = c.arg(kIds).data_as<int32_t>();
    double* out = util::f64(c.arg(kOut));
    const double* b13 = util::present(c.arg(kB13)) ? util::f64(c.arg(kB13)) : nullptr;
    const double* b2 = util::present(c.arg(kB2)) ? util::f64(c.arg(kB2)) : nullptr;
    const int kind = static_cast<int>(c.iparam(kActivation));
#pragma omp parallel for schedule(dynamic, 1) if (t * h * inter > 65536)
    for (int64_t r = 0; r < t; ++r) {
      std::vector<double> mid(static_cast<size_t>(inter));
      for (int64_t j = 0; j < h; ++j) out[r * h + j] = 0;
      for (int64_t i = 0; i < k; ++i) {
        const int64_t ex = ids[r * k + i];
        const double* g = w13 + ex * 2 * inter * h;
        for (int64_t j = 0; j < inter; ++j) {
          double a = 0, b = 0;
          for (int64_t q = 0; q < h; ++q) {
            a += x[r * h + q] * g[j * h + q];
            b += x[r * h + q] * g[(inter + j) * h + q];
          }
          if (b13 != nullptr) a += b13[ex * 2 * inter + j], b += b13[ex * 2 * inter + inter + j];
          mid[static_cast<size_t>(j)] = gated<double>(kind, a, b, c.param(kAlpha), c.param(kLimit));
        }
        for (int64_t q = 0; q < h; ++q) {
          double s = b2 != nullptr ? b2[ex * h + q] : 0.0;
          for (int64_t j = 0; j < inter; ++j) s += mid[static_cast<size_t>(j)] * w2[(ex * h + q) * inter + j];
          out[r * h + q] += tw[r * k + i] * s;
        }
      }
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), h = s.dim("hidden"), e = s.dim("experts"), inter = s.dim("inter"),
                  k = s.dim("k");
    const float a1 = static_cast<float>(std::sqrt(3.0 / static_cast<double>(h)));
    const float a2 = static_cast<float>(std::sqrt(3.0 / static_cast<double>(inter)));
    Tensor ids = Tensor::empty(DType::kI32, {t, k});
    Tensor weights = util::uniform(DType::kF32, {t, k}, rng, "topk_weights", 0.05f, 1.0f);
    const Tensor pick = util::uniform_ints({t, e}, rng, "topk_ids", 0, 1 << 30);
    for (int64_t r = 0; r < t; ++r) {  // k distinct experts per token
      std::vector<std::pair<int64_t, int32_t>> order;
      for (int64_t j = 0; j < e; ++j) order.push_back({pick.data_as<int64_t>()[r * e + j], static_cast<int32_t>(j)});
      std::sort(order.begin(), order.end());
      for (int64_t i = 0; i < k; ++i) ids.data_as<int32_t>()[r * k + i] = order[static_cast<size_t>(i)].second;
    }
    return OpCall{
        {util::output(dt, {t, h}), util::uniform(dt, {t, h}, rng, "hidden_states", -1, 1),
         util::uniform(dt, {e, 2 * inter, h}, rng, "w13", -a1, a1),
         util::uniform(dt, {e, h, inter}, rng, "w2", -a2, a2), weights, ids,
         s.dims.count("bias") && s.dim("bias") ? util::uniform(dt, {e, 2 * inter}, rng, "w13_bias", -0.5f, 0.5f)
                                               : util::none(),
         s.dims.count("bias") && s.dim("bias") ? util::uniform(dt, {e, h}, rng, "w2_bias", -0.5f, 0.5f) : util::none()},
        s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", c.arg(kHidden).size(0)},
                    {"hidden", c.arg(kHidden).size(1)},
                    {"experts", c.arg(kW13).size(0)},
                    {"inter", c.arg(kW13).size(1) / 2},
                    {"k", c.arg(kIds).size(1)},
                    {"bias", util::present(c.arg(kB13)) || util::present(c.arg(kB2)) ? 1 : 0}},
                   c.params};
  };
  d.flops = [](const OpCall& c) {
    return 6.0 * static_cast<double>(c.arg(kIds).numel()) * static_cast<double>(c.arg(kHidden).size(1)) *
           static_cast<double>(c.arg(kW13).size(1) / 2);
  };
  // An expert no token chose is not read: with the ids readable here (host tensors, as
  // the kernel stage's are) only the chosen experts' weights count, the floor a decode
  // step's batch sets. Ids on a device cannot be read without a sync: every expert counts.
  d.bytes = [](const OpCall& c) {
    const double all = util::bytes_of(c);
    const Tensor& ids = c.arg(kIds);
    const int64_t e = c.arg(kW13).size(0);
    if (ids.device().kind != DeviceKind::kCpu || e == 0) return all;
    std::vector<char> chosen(static_cast<size_t>(e), 0);
    int64_t touched = 0;
    for (int64_t i = 0; i < ids.numel(); ++i) {
      const int32_t x = ids.data_as<int32_t>()[i];
      if (x >= 0 && x < e && !chosen[static_cast<size_t>(x)]) {
        chosen[static_cast<size_t>(x)] = 1;
        ++touched;
      }
    }
    const double per_expert = static_cast<double>(c.arg(kW13).nbytes() + c.arg(kW2).nbytes()) / static_cast<double>(e);
    return all - static_cast<double>(e - touched) * per_expert;
  };
  reg.add(d);
  reg.add_impl({"fused_moe", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kHidden).dtype(), [&](auto tag) { fused_moe_cpu<decltype(tag)>(c); });
                }});
}

}  // namespace fk::kernels
