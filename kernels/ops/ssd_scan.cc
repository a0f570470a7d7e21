// ssd_scan: Mamba-2's state-space scan over new tokens (the SSD layer's recurrence),
// continuing from and updating each sequence's state: vLLM's mamba_chunk_scan_combined
// for a prefill and selective_state_update for a decode step, in one op, token-major.
// Per sequence b, head h (of group g = h / (heads / groups)) and channel p of the head:
//   dt   = dt[b, t, h] + dt_bias[h], then softplus when dt_softplus, then clamped to
//          [dt_min, dt_max] when dt_max > 0 (HF's time_step_limit; (0, inf) is no clamp)
//   s[n] = exp(dt A[h]) s[n] + dt B[b, t, g, n] x[b, t, h, p]   (s = ssm_state[b, h, p, :])
//   y    = sum_n s[n] C[b, t, g, n] + D[h] x[b, t, h, p]
//   out  = y * silu(z[b, t, h, p])                               (z optional)
// x, z, out [B, L, H, P] and dt [B, L, H] in the activation dtype, B and C [B, L, G, N]
// likewise; A [H] (= -exp(A_log), once at load), D [H] and dt_bias [H] fp32; ssm_state
// [B, H, P, N] fp32, zeros before a sequence's first call, left holding s after its last
// token. The chunked form (SSD's matrix blocks) computes the same sums in another order;
// this op's baselines walk the tokens (kernels/ops/ssm_scan.h, shared with
// selective_scan).
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"
#include "kernels/ops/ssm_scan.h"

#include <fmt/format.h>

namespace fk::kernels {
namespace {

enum { kOut, kX, kDt, kA, kB, kC, kD, kZ, kDtBias, kState };

constexpr ssm::ScanArgs kArgs{kOut, kX, kDt, kA, kB, kC, kD, kZ, kDtBias, kState};

ssm::ScanLayout layout_of(const OpCall& c) {
  const Tensor& x = c.arg(kX);
  ssm::ScanLayout l;
  l.batch = x.size(0);
  l.len = x.size(1);
  l.head_dim = x.size(3);
  l.channels = x.size(2) * x.size(3);
  l.groups = c.arg(kB).size(2);
  l.n = c.arg(kB).size(3);
  l.a_per_head = true;
  l.softplus = c.iparam(0) != 0;
  l.dt_min = c.param(1);
  l.dt_max = c.param(2);
  return l;
}

template <typename T, typename S, typename A>
void scan(const OpCall& c) {
  ssm::scan<T, S, A>(c, kArgs, layout_of(c));
}

std::string check(const OpDef& d, const OpCall& c) {
  const std::initializer_list<DType> wide = {DType::kF32, DType::kF64};
  std::string e = util::first_error({util::check_tensor(c, d, kOut, 4), util::check_tensor(c, d, kX, 4),
                                     util::check_tensor(c, d, kDt, 3), util::check_tensor(c, d, kA, 1, wide),
                                     util::check_tensor(c, d, kB, 4), util::check_tensor(c, d, kC, 4),
                                     util::check_tensor(c, d, kD, 1, wide), util::check_tensor(c, d, kZ, 4),
                                     util::check_tensor(c, d, kDtBias, 1, wide),
                                     util::check_tensor(c, d, kState, 4, wide), util::check_same_dtype(c, d)});
  if (!e.empty()) return e;
  if (c.params.size() != 3) return std::string("ssd_scan: takes 3 parameters (dt_softplus, dt_min, dt_max)");
  const Tensor& x = c.arg(kX);
  const int64_t b = x.size(0), len = x.size(1), heads = x.size(2), p = x.size(3);
  const int64_t groups = c.arg(kB).size(2), n = c.arg(kB).size(3);
  if (c.arg(kOut).shape() != x.shape()) return std::string("ssd_scan: out and x shapes differ");
  if (util::present(c.arg(kZ)) && c.arg(kZ).shape() != x.shape()) return std::string("ssd_scan: z and x shapes differ");
  if (c.arg(kDt).shape() != Shape{b, len, heads})
    return fmt::format("ssd_scan: dt must be [batch, len, heads] = [{}, {}, {}]", b, len, heads);
  if (groups < 1 || heads % groups != 0)
    return fmt::format("ssd_scan: the groups of B and C ({}) must divide the heads ({})", groups, heads);
  if (n < 1) return std::string("ssd_scan: the state size (B dim 3) must be at least 1");
  if (c.arg(kB).shape() != Shape{b, len, groups, n} || c.arg(kC).shape() != Shape{b, len, groups, n})
    return fmt::format("ssd_scan: B and C must be [batch, len, groups, state] = [{}, {}, {}, {}]", b, len, groups, n);
  const Tensor& st = c.arg(kState);
  if (st.shape() != Shape{b, heads, p, n})
    return fmt::format("ssd_scan: ssm_state must be [batch, heads, head_dim, state] = [{}, {}, {}, {}]", b, heads, p,
                       n);
  for (size_t i : {kA, kD, kDtBias}) {
    if (i != kA && !util::present(c.arg(i))) continue;
    if (c.arg(i).dtype() != st.dtype()) return "ssd_scan: " + d.args[i].name + " must have ssm_state's dtype";
    if (std::string m = util::check_dim(c, d, i, 0, heads, "heads"); !m.empty()) return m;
  }
  if (c.param(2) > 0 && c.param(1) > c.param(2))
    return fmt::format("ssd_scan: dt_min {} is above dt_max {}", c.param(1), c.param(2));
  return std::string();
}

}  // namespace

void register_ssd_scan(OpRegistry& reg) {
  OpDef d;
  d.name = "ssd_scan";
  d.summary = "Mamba-2's state-space scan (scalar decay a head, grouped B and C) with a recurrent state";
  const bool f = true;
  d.args = {{"out", ArgRole::kOut},
            {"x", ArgRole::kIn},
            {"dt", ArgRole::kIn},
            {"A", ArgRole::kIn, f, false, true},
            {"B", ArgRole::kIn},
            {"C", ArgRole::kIn},
            {"D", ArgRole::kIn, f, true, true},
            {"z", ArgRole::kIn, f, true},
            {"dt_bias", ArgRole::kIn, f, true, true},
            {"ssm_state", ArgRole::kInOut, f, false, true}};
  d.params = {"dt_softplus", "dt_min", "dt_max"};
  d.check = [d](const OpCall& c) { return check(d, c); };
  d.reference = [](const OpCall& c) { scan<double, double, double>(c); };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("batch"), len = s.dim("len"), heads = s.dim("heads"), p = s.dim("head_dim");
    const int64_t g = s.dim("groups"), n = s.dim("state");
    const bool skip = s.dim("skip") != 0, gate = s.dim("gate") != 0, bias = s.dim("dt_bias") != 0;
    const DType w = DType::kF32;
    const bool softplus_first = s.params.empty() || s.params[0] != 0;
    return OpCall{{util::output(dt, {b, len, heads, p}), util::uniform(dt, {b, len, heads, p}, rng, "x", -1, 1),
                   // Pre-softplus values, or step sizes already positive.
                   softplus_first ? util::uniform(dt, {b, len, heads}, rng, "dt", -3, 1)
                                  : util::uniform(dt, {b, len, heads}, rng, "dt", 0.01f, 1),
                   util::uniform(w, {heads}, rng, "A", -4, -0.25f), util::uniform(dt, {b, len, g, n}, rng, "B", -1, 1),
                   util::uniform(dt, {b, len, g, n}, rng, "C", -1, 1),
                   skip ? util::uniform(w, {heads}, rng, "D", 0.5f, 1.5f) : util::none(),
                   gate ? util::uniform(dt, {b, len, heads, p}, rng, "z", -2, 2) : util::none(),
                   bias ? util::uniform(w, {heads}, rng, "dt_bias", -0.5f, 0.5f) : util::none(),
                   util::uniform(w, {b, heads, p, n}, rng, "ssm_state", -1, 1)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const Tensor& x = c.arg(kX);
    return OpShape{{{"batch", x.size(0)},
                    {"len", x.size(1)},
                    {"heads", x.size(2)},
                    {"head_dim", x.size(3)},
                    {"groups", c.arg(kB).size(2)},
                    {"state", c.arg(kB).size(3)},
                    {"skip", util::present(c.arg(kD)) ? 1 : 0},
                    {"gate", util::present(c.arg(kZ)) ? 1 : 0},
                    {"dt_bias", util::present(c.arg(kDtBias)) ? 1 : 0}},
                   c.params};
  };
  // Per (token, channel, state): two multiply-adds into s, one into y (the decay is one
  // exp a head and token).
  d.flops = [](const OpCall& c) { return 6.0 * static_cast<double>(c.arg(kX).numel() * c.arg(kB).size(3)); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"ssd_scan", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kX).dtype(), [&](auto tag) { scan<decltype(tag), float, float>(c); });
                }});
}

}  // namespace fk::kernels
