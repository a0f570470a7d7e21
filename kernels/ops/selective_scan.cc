// selective_scan: Mamba's selective state-space scan over new tokens, continuing from
// and updating each sequence's state (vLLM's selective_scan_fn for a prefill and
// selective_state_update for a decode step, in one op, token-major):
//   dt        = delta[b, t, c] + delta_bias[c], then softplus when delta_softplus
//   h[n]      = exp(dt A[c, n]) h[n] + dt B[b, t, n] u[b, t, c]      (h = ssm_state[b, c, :])
//   y         = sum_n h[n] C[b, t, n] + D[c] u[b, t, c]
//   out       = y * silu(z[b, t, c])                                   (z optional)
// u, delta, z, out [B, L, C] in the activation dtype; B, C [B, L, N] likewise; A [C, N],
// D [C] and delta_bias [C] fp32 (vLLM keeps them so: A = -exp(A_log) once, at load);
// ssm_state [B, C, N] fp32, zeros before a sequence's first call, left holding h after
// its last token. softplus(x) = log(1 + e^x), x itself above 20 (torch's threshold).
// The baseline keeps h in fp32 registers across the tokens.
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"
#include "kernels/ops/ssm_scan.h"

#include <fmt/format.h>

namespace fk::kernels {
namespace {

enum { kOut, kU, kDelta, kA, kB, kC, kD, kZ, kDeltaBias, kState };

constexpr ssm::ScanArgs kArgs{kOut, kU, kDelta, kA, kB, kC, kD, kZ, kDeltaBias, kState};

// Mamba's layout: everything per channel, one group of B and C, A [channels, state].
ssm::ScanLayout layout_of(const OpCall& c) {
  ssm::ScanLayout l;
  l.batch = c.arg(kU).size(0);
  l.len = c.arg(kU).size(1);
  l.channels = c.arg(kU).size(2);
  l.n = c.arg(kA).size(1);
  l.softplus = c.iparam(0) != 0;
  return l;
}

template <typename T, typename S, typename A>
void scan(const OpCall& c) {
  ssm::scan<T, S, A>(c, kArgs, layout_of(c));
}

}  // namespace

void register_selective_scan(OpRegistry& reg) {
  OpDef d;
  d.name = "selective_scan";
  d.summary = "Mamba's selective state-space scan with a recurrent state (prefill and decode)";
  const bool f = true;
  d.args = {{"out", ArgRole::kOut},
            {"u", ArgRole::kIn},
            {"delta", ArgRole::kIn},
            {"A", ArgRole::kIn, f, false, true},
            {"B", ArgRole::kIn},
            {"C", ArgRole::kIn},
            {"D", ArgRole::kIn, f, true, true},
            {"z", ArgRole::kIn, f, true},
            {"delta_bias", ArgRole::kIn, f, true, true},
            {"ssm_state", ArgRole::kInOut, f, false, true}};
  d.params = {"delta_softplus"};
  d.check = [d](const OpCall& c) {
    const std::initializer_list<DType> wide = {DType::kF32, DType::kF64};
    std::string e = util::first_error(
        {util::check_tensor(c, d, kOut, 3), util::check_tensor(c, d, kU, 3), util::check_tensor(c, d, kDelta, 3),
         util::check_tensor(c, d, kA, 2, wide), util::check_tensor(c, d, kB, 3), util::check_tensor(c, d, kC, 3),
         util::check_tensor(c, d, kD, 1, wide), util::check_tensor(c, d, kZ, 3),
         util::check_tensor(c, d, kDeltaBias, 1, wide), util::check_tensor(c, d, kState, 3, wide),
         util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    const Tensor& u = c.arg(kU);
    const int64_t ch = u.size(2), n = c.arg(kA).size(1);
    for (size_t i : {kOut, kDelta}) {
      if (c.arg(i).shape() != u.shape()) return "selective_scan: " + d.args[i].name + " and u shapes differ";
    }
    if (util::present(c.arg(kZ)) && c.arg(kZ).shape() != u.shape()) return std::string("selective_scan: z and u shapes differ");
    for (size_t i : {kB, kC}) {
      if (c.arg(i).size(0) != u.size(0) || c.arg(i).size(1) != u.size(1) || c.arg(i).size(2) != n)
        return fmt::format("selective_scan: {} must be [batch, len, state] = [{}, {}, {}]", d.args[i].name, u.size(0),
                           u.size(1), n);
    }
    const Tensor& st = c.arg(kState);
    if (st.size(0) != u.size(0) || st.size(1) != ch || st.size(2) != n)
      return fmt::format("selective_scan: ssm_state must be [batch, channels, state] = [{}, {}, {}]", u.size(0), ch, n);
    if (n < 1) return std::string("selective_scan: the state size (A dim 1) must be at least 1");
    const Tensor& ad = c.arg(kA);
    if (ad.dtype() != st.dtype()) return std::string("selective_scan: A and ssm_state must share one dtype");
    return util::first_error({util::check_dim(c, d, kA, 0, ch, "channels"),
                              util::present(c.arg(kD)) ? util::check_dim(c, d, kD, 0, ch, "channels") : "",
                              util::present(c.arg(kDeltaBias)) ? util::check_dim(c, d, kDeltaBias, 0, ch, "channels") : "",
                              util::present(c.arg(kD)) && c.arg(kD).dtype() != st.dtype()
                                  ? "selective_scan: D must have ssm_state's dtype" : "",
                              util::present(c.arg(kDeltaBias)) && c.arg(kDeltaBias).dtype() != st.dtype()
                                  ? "selective_scan: delta_bias must have ssm_state's dtype" : ""});
  };
  d.reference = [](const OpCall& c) { scan<double, double, double>(c); };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("batch"), len = s.dim("len"), ch = s.dim("channels"), n = s.dim("state");
    const bool skip = s.dim("skip") != 0, gate = s.dim("gate") != 0, bias = s.dim("delta_bias") != 0;
    const DType w = DType::kF32;
    const bool softplus_first = s.params.empty() || s.params[0] != 0;
    return OpCall{{util::output(dt, {b, len, ch}), util::uniform(dt, {b, len, ch}, rng, "u", -1, 1),
                   // Pre-softplus values, or step sizes already positive.
                   softplus_first ? util::uniform(dt, {b, len, ch}, rng, "delta", -3, 1)
                                  : util::uniform(dt, {b, len, ch}, rng, "delta", 0.01f, 1),
                   util::uniform(w, {ch, n}, rng, "A", -4, -0.25f), util::uniform(dt, {b, len, n}, rng, "B", -1, 1),
                   util::uniform(dt, {b, len, n}, rng, "C", -1, 1),
                   skip ? util::uniform(w, {ch}, rng, "D", 0.5f, 1.5f) : util::none(),
                   gate ? util::uniform(dt, {b, len, ch}, rng, "z", -2, 2) : util::none(),
                   bias ? util::uniform(w, {ch}, rng, "delta_bias", -0.5f, 0.5f) : util::none(),
                   util::uniform(w, {b, ch, n}, rng, "ssm_state", -1, 1)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"batch", c.arg(kU).size(0)},
                    {"len", c.arg(kU).size(1)},
                    {"channels", c.arg(kU).size(2)},
                    {"state", c.arg(kA).size(1)},
                    {"skip", util::present(c.arg(kD)) ? 1 : 0},
                    {"gate", util::present(c.arg(kZ)) ? 1 : 0},
                    {"delta_bias", util::present(c.arg(kDeltaBias)) ? 1 : 0}},
                   c.params};
  };
  // Per (token, channel, state): exp, two multiply-adds into h, one into y.
  d.flops = [](const OpCall& c) { return 7.0 * static_cast<double>(c.arg(kU).numel() * c.arg(kA).size(1)); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"selective_scan", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kU).dtype(), [&](auto tag) { scan<decltype(tag), float, float>(c); });
                }});
}

}  // namespace fk::kernels
