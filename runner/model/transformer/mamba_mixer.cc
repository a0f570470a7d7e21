// Mamba layers in a transformer (Jamba, Bamba; core/spec/families/mamba_layers.h): the
// mixer (mixer.h) of every layer an architecture's `mamba:` section does not keep for
// attention. It is the Mamba family's mixer (runner/model/mamba/ssm_mixers.h): Mamba-1's
// with Jamba's inner RMSNorms of dt, B and C (version 1), or Mamba-2's (version 2), over
// mamba.inner_size channels that TP splits as vLLM's mixers do; the layer's norms and its
// MLP or MoE are the transformer's. Each layer keeps, for the rank's sequences,
// conv_state [batch, W - 1, its conv channels] in the activation dtype and ssm_state
// [batch, I_l, N] in fp32; a step at position 0 starts its sequences from zero state, a
// later one continues them.
#include "core/spec/families/mamba_layers.h"
#include "runner/model/mamba/ssm_mixers.h"
#include "runner/model/transformer/mixer.h"

#include <algorithm>
#include <cmath>

namespace fk::runner {
namespace {

float neg_exp(float v) { return -std::exp(v); }

bool mamba_serves(const spec::Architecture& a, int64_t layer) { return spec::is_mamba_layer(a, layer); }

// The shape of version 2's mixer on `pl`'s rank.
SsdMixerShape ssd_shape(const spec::Architecture& a, const Placement& pl) {
  const spec::MambaLayersSpec& m = a.sections.get<spec::MambaLayersSpec>();
  return SsdMixerShape{pl.tp,      pl.tp_rank,   m.inner_size, m.num_heads,           m.n_groups,
                       m.head_dim, m.state_size, a.norm.eps,   m.time_step_limit_min, m.time_step_limit_max};
}

// Version 2: HF BambaMixer's tensors (ssd_plans) as LayerWeights::mixer's in_proj_w,
// in_proj_b, conv_w, conv_b, fp32 dt_bias, a and d, gate_norm_w, out_proj_w, out_proj_b.
void mamba2_weights(const LayerGen& g, int64_t l, LayerWeights& w) {
  const spec::MambaLayersSpec& m = g.a.sections.get<spec::MambaLayersSpec>();
  using S = LayerWeights::Storage;
  const SsdPlans p = ssd_plans([&](const char* rest) { return g.layer_name(l, std::string("mamba.") + rest); },
                               g.a.hidden_size, ssd_shape(g.a, g.pl), m.conv_kernel, m.conv_bias, m.proj_bias);
  w.add_mixer("in_proj_w", g.make(p.in_proj_w));
  if (p.in_proj_b) w.add_mixer("in_proj_b", g.make(*p.in_proj_b));
  w.add_mixer("conv_w", g.make(p.conv_w));
  if (p.conv_b) w.add_mixer("conv_b", g.make(*p.conv_b));
  w.add_mixer("dt_bias", g.make.fp32(p.dt_bias), S::kFp32);
  w.add_mixer("a", g.make.fp32(p.a_log, neg_exp), S::kFp32);
  w.add_mixer("d", g.make.fp32(p.d), S::kFp32);
  w.add_mixer("gate_norm_w", g.make(p.gate_norm_w));
  w.add_mixer("out_proj_w", g.make(p.out_proj_w));
  if (p.out_proj_b) w.add_mixer("out_proj_b", g.make(*p.out_proj_b));
}

// Version 1: the rank's channels [i0, i0 + I_l) of HF JambaMambaMixer's tensors (LayerWeights::mixer):
// in_proj_w [2 I_l, H] (x rows, then gate rows) and its bias; conv_w [I_l, W] and
// conv_b; x_proj_w [R + 2 N, I_l] (its columns); the inner norms dt_norm [R], b_norm
// [N], c_norm [N] (replicated); dt_proj_w [I_l, R]; fp32 dt_bias [I_l], a [I_l, N] (=
// -exp(A_log)) and d [I_l]; out_proj_w [H, I_l] (its columns) and its bias. Random
// values as the Mamba family's (runner/model/mamba/weights.h).
void mamba_weights(const LayerGen& g, int64_t l, LayerWeights& w) {
  const spec::MambaLayersSpec& m = g.a.sections.get<spec::MambaLayersSpec>();
  if (m.mamba2()) return mamba2_weights(g, l, w);
  const int64_t h = g.a.hidden_size, i = m.inner_size, il = i / g.pl.tp, i0 = g.pl.tp_rank * il;
  const int64_t n = m.state_size, r = m.time_step_rank, k = m.conv_kernel;
  const auto name = [&](const char* rest) { return g.layer_name(l, std::string("mamba.") + rest); };
  using S = LayerWeights::Storage;
  w.add_mixer("in_proj_w", g.make(plan_concat_rows({g.rows(name("in_proj.weight"), 2 * i, i0, il, h),
                                                    g.rows(name("in_proj.weight"), 2 * i, i + i0, il, h)})));
  if (m.proj_bias)
    w.add_mixer("in_proj_b", g.make(plan_concat_vectors({g.bias_rows(name("in_proj.bias"), 2 * i, i0, il),
                                                         g.bias_rows(name("in_proj.bias"), 2 * i, i + i0, il)})));
  w.add_mixer("conv_w", g.make(g.rows(name("conv1d.weight"), i, i0, il, k)));
  if (m.conv_bias) w.add_mixer("conv_b", g.make(g.bias_rows(name("conv1d.bias"), i, i0, il)));
  const float bi = linear_bound(i);
  w.add_mixer("x_proj_w", g.make(g.draw(name("x_proj.weight"), r + 2 * n, i, 0, r + 2 * n, i0, il, -bi, bi)));
  if (m.inner_norms) {
    w.add_mixer("dt_norm", g.make(g.draw_vector(name("dt_layernorm.weight"), r, 0.8f, 1.2f)));
    w.add_mixer("b_norm", g.make(g.draw_vector(name("b_layernorm.weight"), n, 0.8f, 1.2f)));
    w.add_mixer("c_norm", g.make(g.draw_vector(name("c_layernorm.weight"), n, 0.8f, 1.2f)));
  }
  w.add_mixer("dt_proj_w", g.make(g.rows(name("dt_proj.weight"), i, i0, il, r)));
  w.add_mixer("dt_bias", g.make.fp32(plan_vector(name("dt_proj.bias"), i, i0, il, -4.6f, -2.3f)), S::kFp32);
  const float log_n = std::log(static_cast<float>(std::max<int64_t>(n, 2)));
  w.add_mixer("a", g.make.fp32(g.draw(name("A_log"), i, n, i0, il, 0, n, 0.0f, log_n), neg_exp), S::kFp32);
  w.add_mixer("d", g.make.fp32(plan_vector(name("D"), i, i0, il, 0.5f, 1.5f)), S::kFp32);
  w.add_mixer("out_proj_w", g.make(g.cols(name("out_proj.weight"), i, i0, il)));
  if (m.proj_bias) w.add_mixer("out_proj_b", g.make(g.bias_rows(name("out_proj.bias"), h, 0, h)));
}

class MambaLayer final : public Mixer {
 public:
  MambaLayer(const LayerContext& ctx, int64_t) : c_(ctx), m_(ctx.arch.sections.get<spec::MambaLayersSpec>()) {
    const int64_t il = m_.inner_size / c_.placement.tp;
    const int64_t conv_channels = m_.mamba2() ? m_.conv_dim(c_.placement.tp) : il;
    conv_state_ = c_.rt.zeros(c_.dtype, {c_.batch, m_.conv_kernel - 1, conv_channels});
    ssm_state_ = c_.rt.zeros(DType::kF32, {c_.batch, il, m_.state_size});
  }

  void reset() override {
    c_.rt.zero(conv_state_);
    c_.rt.zero(ssm_state_);
  }

  Tensor forward(const LayerWeights& w, const Tensor& x, const MixerStep& st) override {
    if (made_from_ != &w) resolve(w);
    const Tensor conv = conv_state_.slice(0, st.seq_begin, st.seqs);
    const Tensor ssm = ssm_state_.slice(0, st.seq_begin, st.seqs);
    if (st.q_start == 0) {  // a new prompt: its sequences start from zero state
      c_.rt.zero_in_place(conv);
      c_.rt.zero_in_place(ssm);
    }
    if (m_.mamba2())
      return ssd_mixer(c_.rt, c_.comms, c_.dtype, ssd_shape(c_.arch, c_.placement), w2_, x, conv, ssm, st.seqs,
                       st.q_len);
    const SelectiveMixerShape shape{m_.inner_size / c_.placement.tp, m_.state_size, m_.time_step_rank,
                                    c_.arch.norm.eps};
    return selective_mixer(c_.rt, c_.comms, c_.placement.tp_rank, c_.dtype, shape, w_, x, conv, ssm, st.seqs, st.q_len);
  }

 private:
  // The layer's tensors by role, looked up once (a layer's weights outlive its model);
  // a version's absent names are undefined tensors.
  void resolve(const LayerWeights& w) {
    w_.in_proj_w = w.mixer_tensor("in_proj_w");
    w_.in_proj_b = w.mixer_tensor("in_proj_b");
    w_.conv_w = w.mixer_tensor("conv_w");
    w_.conv_b = w.mixer_tensor("conv_b");
    w_.x_proj_w = w.mixer_tensor("x_proj_w");
    w_.dt_norm = w.mixer_tensor("dt_norm");
    w_.b_norm = w.mixer_tensor("b_norm");
    w_.c_norm = w.mixer_tensor("c_norm");
    w_.dt_proj_w = w.mixer_tensor("dt_proj_w");
    w_.dt_bias = w.mixer_tensor("dt_bias");
    w_.a = w.mixer_tensor("a");
    w_.d = w.mixer_tensor("d");
    w_.out_proj_w = w.mixer_tensor("out_proj_w");
    w_.out_proj_b = w.mixer_tensor("out_proj_b");
    w2_ = {w_.in_proj_w,  w_.in_proj_b, w_.conv_w, w_.conv_b, w_.dt_bias, w_.a, w_.d, w.mixer_tensor("gate_norm_w"),
           w_.out_proj_w, w_.out_proj_b};
    made_from_ = &w;
  }

  const LayerContext& c_;
  const spec::MambaLayersSpec& m_;
  Tensor conv_state_, ssm_state_;
  SelectiveMixerWeights w_;  // version 1's tensors
  SsdMixerWeights w2_;       // version 2's
  const LayerWeights* made_from_ = nullptr;
};

std::unique_ptr<Mixer> make_mamba(const LayerContext& ctx, int64_t layer) {
  return std::make_unique<MambaLayer>(ctx, layer);
}

}  // namespace

void register_mamba_mixer(MixerRegistry& r) {
  MixerKind k;
  k.name = "mamba";
  k.serves = mamba_serves;
  k.weights = mamba_weights;
  k.make = make_mamba;
  r.add(std::move(k));
}

}  // namespace fk::runner
