// causal_conv1d: the depthwise causal convolution of Mamba's mixer over new tokens,
// with its rolling state (vLLM's causal_conv1d_fn / causal_conv1d_update in one op,
// token-major like the model's activations):
//   xx[b]         = concat(conv_state[b], x[b]) along time  ([W - 1 + L, C])
//   out[b, t, c]  = act(bias[c] + sum_k weight[c, k] * xx[b, t + k, c])
//   conv_state[b] = the last W - 1 rows of xx[b]  (what the next call continues from)
// x, out [B, L, C]; weight [C, W]; bias [C] (optional); conv_state [B, W - 1, C], zeros
// before a sequence's first call. activation: 0 none, 1 silu. A prefill is one call with
// L = prompt length, a decode step one with L = 1. fp32 accumulation in the baseline.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cmath>
#include <vector>

namespace fk::kernels {
namespace {

enum { kOut, kX, kWeight, kBias, kState };

template <typename F>
F activate(int kind, F v) {
  return kind == 1 ? v / (F(1) + std::exp(-v)) : v;
}

// Any element type T, accumulating in A (float in the baseline, double in the reference).
template <typename T, typename A>
void conv(const OpCall& c) {
  const int64_t b = c.arg(kX).size(0), len = c.arg(kX).size(1), ch = c.arg(kX).size(2);
  const int64_t w = c.arg(kWeight).size(1), keep = w - 1;
  const T* x = c.arg(kX).data_as<T>();
  const T* wt = c.arg(kWeight).data_as<T>();
  const T* bias = util::present(c.arg(kBias)) ? c.arg(kBias).data_as<T>() : nullptr;
  T* state = c.arg(kState).data_as<T>();
  T* out = c.arg(kOut).data_as<T>();
  const int kind = static_cast<int>(c.iparam(0));
#pragma omp parallel for schedule(static) if (b * len * ch * w > 65536)
  for (int64_t s = 0; s < b; ++s) {
    // The window of one sequence: its state rows, then its new rows.
    auto row = [&](int64_t i) -> const T* {
      return i < keep ? state + (s * keep + i) * ch : x + (s * len + i - keep) * ch;
    };
    for (int64_t t = 0; t < len; ++t) {
      T* o = out + (s * len + t) * ch;
      for (int64_t j = 0; j < ch; ++j) {
        A acc = bias != nullptr ? static_cast<A>(cpu::load(bias[j])) : A(0);
        for (int64_t k = 0; k < w; ++k) acc += static_cast<A>(cpu::load(wt[j * w + k])) * static_cast<A>(cpu::load(row(t + k)[j]));
        o[j] = cpu::put<T>(activate<A>(kind, acc));
      }
    }
    // The new state: the window's last `keep` rows (copied first: they may be state rows).
    std::vector<T> tail(static_cast<size_t>(keep * ch));
    for (int64_t i = 0; i < keep; ++i)
      for (int64_t j = 0; j < ch; ++j) tail[static_cast<size_t>(i * ch + j)] = row(len + i)[j];
    std::copy(tail.begin(), tail.end(), state + s * keep * ch);
  }
}

}  // namespace

void register_causal_conv1d(OpRegistry& reg) {
  OpDef d;
  d.name = "causal_conv1d";
  d.summary = "depthwise causal conv1d over new tokens with a rolling state (Mamba)";
  d.args = {{"out", ArgRole::kOut},
            {"x", ArgRole::kIn},
            {"weight", ArgRole::kIn},
            {"bias", ArgRole::kIn, true, true},
            {"conv_state", ArgRole::kInOut}};
  d.params = {"activation"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kOut, 3), util::check_tensor(c, d, kX, 3),
                                       util::check_tensor(c, d, kWeight, 2), util::check_tensor(c, d, kBias, 1),
                                       util::check_tensor(c, d, kState, 3), util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    const Tensor &x = c.arg(kX), &w = c.arg(kWeight), &st = c.arg(kState);
    if (c.arg(kOut).shape() != x.shape()) return std::string("causal_conv1d: out and x shapes differ");
    if (w.size(1) < 2) return std::string("causal_conv1d: the kernel width (weight dim 1) must be at least 2");
    return util::first_error(
        {util::check_dim(c, d, kWeight, 0, x.size(2), "channels"),
         util::present(c.arg(kBias)) ? util::check_dim(c, d, kBias, 0, x.size(2), "channels") : "",
         util::check_dim(c, d, kState, 0, x.size(0), "batch"),
         util::check_dim(c, d, kState, 1, w.size(1) - 1, "kernel width - 1"),
         util::check_dim(c, d, kState, 2, x.size(2), "channels"),
         c.iparam(0) == 0 || c.iparam(0) == 1 ? std::string() : "causal_conv1d: activation must be 0 (none) or 1 (silu)",
         st.numel() > 0 ? std::string() : "causal_conv1d: empty conv_state"});
  };
  d.reference = [](const OpCall& c) { conv<double, double>(c); };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("batch"), len = s.dim("len"), ch = s.dim("channels"), w = s.dim("width");
    const float bound = 1.0f / std::sqrt(static_cast<float>(w));
    return OpCall{{util::output(dt, {b, len, ch}), util::uniform(dt, {b, len, ch}, rng, "x", -2, 2),
                   util::uniform(dt, {ch, w}, rng, "weight", -bound, bound),
                   s.dim("bias") != 0 ? util::uniform(dt, {ch}, rng, "bias", -0.5f, 0.5f) : util::none(),
                   util::uniform(dt, {b, w - 1, ch}, rng, "conv_state", -2, 2)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"batch", c.arg(kX).size(0)},
                    {"len", c.arg(kX).size(1)},
                    {"channels", c.arg(kX).size(2)},
                    {"width", c.arg(kWeight).size(1)},
                    {"bias", util::present(c.arg(kBias)) ? 1 : 0}},
                   c.params};
  };
  d.flops = [](const OpCall& c) { return 2.0 * static_cast<double>(c.arg(kX).numel() * c.arg(kWeight).size(1)); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"causal_conv1d", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kX).dtype(), [&](auto tag) { conv<decltype(tag), float>(c); });
                }});
}

}  // namespace fk::kernels
