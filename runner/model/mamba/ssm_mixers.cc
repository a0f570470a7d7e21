// The Mamba mixers (ssm_mixers.h).
#include "runner/model/mamba/ssm_mixers.h"

#include <algorithm>
#include <cmath>

namespace fk::runner {
namespace {

kernels::OpCall call(std::vector<Tensor> args, std::vector<double> params = {}) {
  return kernels::OpCall{std::move(args), std::move(params)};
}

Tensor linear(Runtime& rt, const Tensor& x, const Tensor& w, const Tensor& b, const char* role) {
  Tensor out = rt.empty(x.dtype(), {x.size(0), w.size(0)});
  rt.run("linear", role, call({out, x, w, b}));
  return out;
}

// The inner RMSNorm of t when `w` is defined, else t.
Tensor inner_norm(Runtime& rt, const Tensor& t, const Tensor& w, double eps, const char* role) {
  if (!w.defined()) return t;
  Tensor out = rt.empty(t.dtype(), t.shape());
  rt.run("rms_norm", role, call({out, t, w}, {eps}));
  return out;
}

// Columns [c0, c0 + cols) of m [rows, K] as a contiguous [rows, cols] tensor in `dtype`.
Tensor column_block(Runtime& rt, DType dtype, const Tensor& m, int64_t c0, int64_t cols) {
  Tensor out = rt.empty(dtype, {m.size(0), cols});
  rt.copy_rows(out, m.slice(1, c0, cols));
  return out;
}

}  // namespace

Tensor selective_mixer(Runtime& rt, const ModelComms& comms, int64_t tp_rank, DType dtype, const SelectiveMixerShape& s,
                       const SelectiveMixerWeights& w, const Tensor& x, const Tensor& conv_state,
                       const Tensor& ssm_state, int64_t seqs, int64_t q_len) {
  const int64_t rows = x.size(0), il = s.inner_local, n = s.state_size, r = s.time_step_rank;
  const Tensor xz = linear(rt, x, w.in_proj_w, w.in_proj_b, "mixer.in_proj");
  const Tensor xs = column_block(rt, dtype, xz, 0, il);
  const Tensor z = column_block(rt, dtype, xz, il, il);
  const Shape seq_major = {seqs, q_len, il};
  Tensor xc = rt.empty(dtype, {rows, il});
  rt.run("causal_conv1d", "mixer.conv1d",
         call({xc.reshape(seq_major), xs.reshape(seq_major), w.conv_w, w.conv_b, conv_state}, {1.0}));
  Tensor dbc = linear(rt, xc, w.x_proj_w, Tensor(), "mixer.x_proj");
  rt.all_reduce(comms.tp, dbc, "tp.x_proj");
  const Tensor dt = inner_norm(rt, column_block(rt, dtype, dbc, 0, r), w.dt_norm, s.norm_eps, "mixer.dt_norm");
  const Tensor b = inner_norm(rt, column_block(rt, dtype, dbc, r, n), w.b_norm, s.norm_eps, "mixer.b_norm");
  const Tensor c = inner_norm(rt, column_block(rt, dtype, dbc, r + n, n), w.c_norm, s.norm_eps, "mixer.c_norm");
  const Tensor delta = linear(rt, dt, w.dt_proj_w, Tensor(), "mixer.dt_proj");
  Tensor y = rt.empty(dtype, {rows, il});
  const Shape states = {seqs, q_len, n};
  rt.run("selective_scan", "mixer.selective_scan",
         call({y.reshape(seq_major), xc.reshape(seq_major), delta.reshape(seq_major), w.a, b.reshape(states),
               c.reshape(states), w.d, z.reshape(seq_major), w.dt_bias, ssm_state},
              {1.0}));
  Tensor out = linear(rt, y, w.out_proj_w, tp_rank == 0 ? w.out_proj_b : Tensor(), "mixer.out_proj");
  rt.all_reduce(comms.tp, out, "tp.mixer_out");
  return out;
}

SsdPlans ssd_plans(const std::function<std::string(const char*)>& name, int64_t hidden, const SsdMixerShape& s,
                   int64_t conv_kernel, bool conv_bias, bool proj_bias) {
  const int64_t h = hidden, i = s.inner, n = s.state_size, gn = s.groups * n, cd = i + 2 * gn;
  const int64_t heads = s.heads, rows = i + cd + heads;
  const int64_t il = s.inner_local(), i0 = s.tp_rank * il, hl = heads / s.tp, h0 = s.tp_rank * hl;
  const int64_t gnl = gn / s.tp, g0 = s.tp_rank * gnl;
  const auto vec = [&](const char* rest, int64_t total, int64_t begin, int64_t count, float lo, float hi) {
    return plan_vector(name(rest), total, begin, count, lo, hi);
  };
  // This rank's rows of a tensor laid out [x I | B gn | C gn] from row `base` on (in_proj
  // after z; the conv's own rows from 0).
  const auto xbc_rows = [&](auto&& part, int64_t base) {
    return std::vector<Planned>{part(base + i0, il), part(base + i + g0, gnl), part(base + i + gn + g0, gnl)};
  };
  SsdPlans p;
  const float bh = linear_bound(h);
  const auto in_rows = [&](int64_t r0, int64_t nr) {
    return plan_block(name("in_proj.weight"), rows, h, r0, nr, 0, h, -bh, bh);
  };
  std::vector<Planned> in_parts = {in_rows(i0, il)};  // the gate z
  for (Planned& part : xbc_rows(in_rows, i)) in_parts.push_back(std::move(part));
  in_parts.push_back(in_rows(i + cd + h0, hl));  // dt
  p.in_proj_w = plan_concat_rows(in_parts);
  if (proj_bias) {
    const auto in_b = [&](int64_t b0, int64_t nb) { return vec("in_proj.bias", rows, b0, nb, -0.1f, 0.1f); };
    std::vector<Planned> parts = {in_b(i0, il)};
    for (Planned& part : xbc_rows(in_b, i)) parts.push_back(std::move(part));
    parts.push_back(in_b(i + cd + h0, hl));
    p.in_proj_b = plan_concat_vectors(parts);
  }
  const float bk = linear_bound(conv_kernel);
  p.conv_w = plan_concat_rows(xbc_rows(
      [&](int64_t r0, int64_t nr) {
        return plan_block(name("conv1d.weight"), cd, conv_kernel, r0, nr, 0, conv_kernel, -bk, bk);
      },
      0));
  if (conv_bias)
    p.conv_b = plan_concat_vectors(
        xbc_rows([&](int64_t b0, int64_t nb) { return vec("conv1d.bias", cd, b0, nb, -0.1f, 0.1f); }, 0));
  p.dt_bias = vec("dt_bias", heads, h0, hl, -4.6f, -2.3f);
  p.a_log = vec("A_log", heads, h0, hl, 0.0f, std::log(static_cast<float>(std::max<int64_t>(heads, 2))));
  p.d = vec("D", heads, h0, hl, 0.5f, 1.5f);
  p.gate_norm_w = vec("norm.weight", i, 0, i, 0.8f, 1.2f);
  const float bi = linear_bound(i);
  p.out_proj_w = plan_block(name("out_proj.weight"), h, i, 0, h, i0, il, -bi, bi);
  if (proj_bias) p.out_proj_b = vec("out_proj.bias", h, 0, h, -0.1f, 0.1f);
  return p;
}

Tensor ssd_mixer(Runtime& rt, const ModelComms& comms, DType dtype, const SsdMixerShape& s, const SsdMixerWeights& w,
                 const Tensor& x, const Tensor& conv_state, const Tensor& ssm_state, int64_t seqs, int64_t q_len) {
  const int64_t tp = s.tp, rows = x.size(0), n = s.state_size, p = s.head_dim;
  const int64_t i = s.inner_local(), heads = s.heads / tp, groups = s.groups / tp;
  const int64_t gn = groups * n, cd = s.conv_local();
  const Tensor proj = linear(rt, x, w.in_proj_w, w.in_proj_b, "mixer.in_proj");  // z, then x B C, then dt
  // silu_and_mul's input: the gate z in the first half, the scan's output in the second.
  const Tensor pair = rt.empty(dtype, {rows, 2 * i});
  rt.copy_rows(pair.slice(1, 0, i), proj.slice(1, 0, i));
  const Tensor xbc = column_block(rt, dtype, proj, i, cd);
  const Tensor dt = column_block(rt, dtype, proj, i + cd, heads);
  Tensor conv = rt.empty(dtype, {rows, cd});
  rt.run(
      "causal_conv1d", "mixer.conv1d",
      call({conv.reshape({seqs, q_len, cd}), xbc.reshape({seqs, q_len, cd}), w.conv_w, w.conv_b, conv_state}, {1.0}));
  const Tensor xs = column_block(rt, dtype, conv, 0, i);
  const Tensor b = column_block(rt, dtype, conv, i, gn);
  const Tensor c = column_block(rt, dtype, conv, i + gn, gn);
  Tensor y = rt.empty(dtype, {rows, i});
  const Shape heads_shape = {seqs, q_len, heads, p}, groups_shape = {seqs, q_len, groups, n};
  rt.run("ssd_scan", "mixer.ssd_scan",
         call({y.reshape(heads_shape), xs.reshape(heads_shape), dt.reshape({seqs, q_len, heads}), w.a,
               b.reshape(groups_shape), c.reshape(groups_shape), w.d, Tensor(), w.dt_bias,
               ssm_state.reshape({seqs, heads, p, n})},
              {1.0, s.dt_min, s.dt_max}));
  // HF's MambaRMSNormGated: rms_norm(y * silu(z)) over all I channels. With TP the ranks'
  // channel blocks are all-gathered into the full width (in rank order, as the channels
  // are), normalised there and this rank's block taken back.
  rt.copy_rows(pair.slice(1, i, i), y);
  Tensor gated = rt.empty(dtype, {rows, i});
  rt.run("silu_and_mul", "mixer.gate", call({gated, pair}));
  Tensor full = gated;
  if (tp > 1) {
    Tensor gathered = rt.empty(dtype, {tp, rows, i});
    rt.all_gather(comms.tp, gated, gathered, "tp.gate_norm_gather");
    full = rt.empty(dtype, {rows, tp * i});
    for (int64_t r = 0; r < tp; ++r) rt.copy_rows(full.slice(1, r * i, i), gathered.slice(0, r, 1).reshape({rows, i}));
  }
  Tensor normed = rt.empty(dtype, full.shape());
  rt.run("rms_norm", "mixer.gate_norm", call({normed, full, w.gate_norm_w}, {s.norm_eps}));
  if (tp > 1) {
    Tensor own = rt.empty(dtype, {rows, i});
    rt.copy_rows(own, normed.slice(1, s.tp_rank * i, i));
    normed = own;
  }
  Tensor out = linear(rt, normed, w.out_proj_w, s.tp_rank == 0 ? w.out_proj_b : Tensor(), "mixer.out_proj");
  rt.all_reduce(comms.tp, out, "tp.mixer_out");
  return out;
}

}  // namespace fk::runner
