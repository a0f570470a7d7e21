#include "runner/model/mamba/selective_mixer.h"

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

}  // namespace

Tensor column_block(Runtime& rt, DType dtype, const Tensor& m, int64_t c0, int64_t cols) {
  Tensor out = rt.empty(dtype, {m.size(0), cols});
  rt.copy_rows(out, m.slice(1, c0, cols));
  return out;
}

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

}  // namespace fk::runner
