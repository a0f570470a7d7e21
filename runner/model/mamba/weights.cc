#include "runner/model/mamba/weights.h"

#include "core/spec/families/mamba.h"
#include "runner/model/weight_plan.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace fk::runner {
namespace {

using spec::Architecture;

float neg_exp(float v) { return -std::exp(v); }

struct Gen {
  const Architecture& a;
  const Placement& pl;
  WeightMaker make;

  int64_t inter() const { return a.intermediate_size; }
  int64_t il() const { return a.intermediate_size / pl.tp; }
  int64_t i0() const { return pl.tp_rank * il(); }
  std::string name(int64_t l, const char* rest) const { return fmt::format("backbone.layers.{}.{}", l, rest); }

  // Rows [i0, i0 + I_l) of a [I, cols] tensor (a channel-split matrix).
  Planned channel_rows(const std::string& n, int64_t cols, float bound) const {
    return plan_block(n, inter(), cols, i0(), il(), 0, cols, -bound, bound);
  }
  Planned channel_vector(const std::string& n, float lo, float hi) const {
    return plan_vector(n, inter(), i0(), il(), lo, hi);
  }

  // Mamba-2's layer on this rank: its heads [h0, h0 + hl) (x channels [i0, i0 + I_l), the
  // gate's likewise, dt, dt_bias, A, D) and its groups [g0, g0 + gl) of B and C (tp divides
  // num_heads and n_groups: core/spec/families/mamba.cc); the gated norm's weight whole
  // (the norm runs over every channel, gathered across TP); out_proj's columns.
  MambaLayerWeights layer2(int64_t l) const {
    const spec::SsmSpec& s = a.sections.get<spec::SsmSpec>();
    const int64_t h = a.hidden_size, i = inter(), n = s.state_size, gn = s.n_groups * n, cd = s.conv_dim(i);
    const int64_t heads = s.num_heads, rows = i + cd + heads;
    const int64_t hl = heads / pl.tp, h0 = pl.tp_rank * hl, gnl = gn / pl.tp, g0 = pl.tp_rank * gnl;
    MambaLayerWeights w;
    w.index = l;
    const auto vec = [&](const char* rest, int64_t n_total, int64_t begin, int64_t count, float lo, float hi) {
      return plan_vector(name(l, rest), n_total, begin, count, lo, hi);
    };
    // This rank's rows of a tensor laid out [x I | B gn | C gn] from row `base` on (in_proj
    // after z; the conv's own rows from 0).
    const auto xbc_rows = [&](auto&& part, int64_t base) {
      return std::vector<Planned>{part(base + i0(), il()), part(base + i + g0, gnl), part(base + i + gn + g0, gnl)};
    };
    const std::string in = name(l, "mixer.in_proj.weight");
    const float bh = linear_bound(h);
    const auto in_rows = [&](int64_t r0, int64_t nr) { return plan_block(in, rows, h, r0, nr, 0, h, -bh, bh); };
    std::vector<Planned> in_parts = {in_rows(i0(), il())};  // the gate z
    for (Planned& p : xbc_rows(in_rows, i)) in_parts.push_back(std::move(p));
    in_parts.push_back(in_rows(i + cd + h0, hl));  // dt
    w.norm_w = make(plan_vector(name(l, "norm.weight"), h, 0, h, 0.8f, 1.2f));
    w.in_proj_w = make(plan_concat_rows(in_parts));
    if (s.proj_bias) {
      const auto in_b = [&](int64_t b0, int64_t nb) { return vec("mixer.in_proj.bias", rows, b0, nb, -0.1f, 0.1f); };
      std::vector<Planned> parts = {in_b(i0(), il())};
      for (Planned& p : xbc_rows(in_b, i)) parts.push_back(std::move(p));
      parts.push_back(in_b(i + cd + h0, hl));
      w.in_proj_b = make(plan_concat_vectors(parts));
    }
    const std::string conv = name(l, "mixer.conv1d.weight");
    const float bk = linear_bound(s.conv_kernel);
    w.conv_w = make(plan_concat_rows(xbc_rows(
        [&](int64_t r0, int64_t nr) { return plan_block(conv, cd, s.conv_kernel, r0, nr, 0, s.conv_kernel, -bk, bk); },
        0)));
    if (s.conv_bias)
      w.conv_b = make(plan_concat_vectors(
          xbc_rows([&](int64_t b0, int64_t nb) { return vec("mixer.conv1d.bias", cd, b0, nb, -0.1f, 0.1f); }, 0)));
    w.dt_bias = make.fp32(vec("mixer.dt_bias", heads, h0, hl, -4.6f, -2.3f));
    const float log_h = std::log(static_cast<float>(std::max<int64_t>(heads, 2)));
    w.a = make.fp32(vec("mixer.A_log", heads, h0, hl, 0.0f, log_h), neg_exp);
    w.d = make.fp32(vec("mixer.D", heads, h0, hl, 0.5f, 1.5f));
    w.gate_norm_w = make(vec("mixer.norm.weight", i, 0, i, 0.8f, 1.2f));
    const float bi = linear_bound(i);
    w.out_proj_w = make(plan_block(name(l, "mixer.out_proj.weight"), h, i, 0, h, i0(), il(), -bi, bi));
    if (s.proj_bias) w.out_proj_b = make(vec("mixer.out_proj.bias", h, 0, h, -0.1f, 0.1f));
    return w;
  }

  MambaLayerWeights layer(int64_t l) const {
    const spec::SsmSpec& s = a.sections.get<spec::SsmSpec>();
    if (s.mamba2()) return layer2(l);
    const int64_t h = a.hidden_size, i = inter(), n = s.state_size, r = s.time_step_rank;
    MambaLayerWeights w;
    w.index = l;
    w.norm_w = make(plan_vector(name(l, "norm.weight"), h, 0, h, 0.8f, 1.2f));
    // in_proj's rows are x's I, then the gate's I: this rank takes its channels of each.
    const std::string in = name(l, "mixer.in_proj.weight");
    const float bh = linear_bound(h);
    w.in_proj_w = make(plan_concat_rows({plan_block(in, 2 * i, h, i0(), il(), 0, h, -bh, bh),
                                         plan_block(in, 2 * i, h, i + i0(), il(), 0, h, -bh, bh)}));
    if (s.proj_bias) {
      const std::string inb = name(l, "mixer.in_proj.bias");
      w.in_proj_b = make(plan_concat_vectors(
          {plan_vector(inb, 2 * i, i0(), il(), -0.1f, 0.1f), plan_vector(inb, 2 * i, i + i0(), il(), -0.1f, 0.1f)}));
    }
    w.conv_w = make(channel_rows(name(l, "mixer.conv1d.weight"), s.conv_kernel, linear_bound(s.conv_kernel)));
    if (s.conv_bias) w.conv_b = make(channel_vector(name(l, "mixer.conv1d.bias"), -0.1f, 0.1f));
    const float bi = linear_bound(i);
    w.x_proj_w = make(plan_block(name(l, "mixer.x_proj.weight"), r + 2 * n, i, 0, r + 2 * n, i0(), il(), -bi, bi));
    w.dt_proj_w = make(channel_rows(name(l, "mixer.dt_proj.weight"), r, linear_bound(r)));
    w.dt_bias = make.fp32(channel_vector(name(l, "mixer.dt_proj.bias"), -4.6f, -2.3f));
    const float log_n = std::log(static_cast<float>(std::max<int64_t>(n, 2)));
    w.a = make.fp32(plan_block(name(l, "mixer.A_log"), i, n, i0(), il(), 0, n, 0.0f, log_n), neg_exp);
    w.d = make.fp32(channel_vector(name(l, "mixer.D"), 0.5f, 1.5f));
    w.out_proj_w = make(plan_block(name(l, "mixer.out_proj.weight"), h, i, 0, h, i0(), il(), -bi, bi));
    if (s.proj_bias) w.out_proj_b = make(plan_vector(name(l, "mixer.out_proj.bias"), h, 0, h, -0.1f, 0.1f));
    return w;
  }
};

MambaWeights make_shard(const Architecture& a, const Placement& pl, const WeightMaker& make) {
  const Gen g{a, pl, make};
  MambaWeights m;
  m.dtype = make.made_dtype();
  auto embedding = [&] { return make(plan_vocab_block(a, pl, "backbone.embeddings.weight", std::sqrt(3.0f))); };
  if (pl.first_stage()) m.embed = embedding();
  const int64_t first = pl.first_layer(a);
  for (int64_t l = first; l < first + pl.layer_count(a); ++l) m.layers.push_back(g.layer(l));
  if (pl.last_stage()) {
    m.final_norm_w = make(plan_vector("backbone.norm_f.weight", a.hidden_size, 0, a.hidden_size, 0.8f, 1.2f));
    m.lm_head = a.embedding.tied ? (m.embed.defined() ? m.embed : embedding())
                                 : make(plan_vocab_block(a, pl, "lm_head.weight", linear_bound(a.hidden_size)));
  }
  return m;
}

// Every tensor slot with its name; `fp32` marks the ones that stay fp32. A tied head
// shares the embedding's storage and is left out; callers restore the tie.
template <typename M, typename T>
std::vector<std::tuple<std::string, T*, bool>> slots(M& m) {
  std::vector<std::tuple<std::string, T*, bool>> out = {{"embed", &m.embed, false},
                                                        {"final_norm_w", &m.final_norm_w, false}};
  if (!(m.lm_head.defined() && m.lm_head.data() == m.embed.data())) out.emplace_back("lm_head", &m.lm_head, false);
  for (auto& l : m.layers) {
    const std::string p = fmt::format("layers.{}.", l.index);
    for (auto [name, t, f] :
         std::initializer_list<std::tuple<const char*, T*, bool>>{{"norm_w", &l.norm_w, false},
                                                                  {"in_proj_w", &l.in_proj_w, false},
                                                                  {"in_proj_b", &l.in_proj_b, false},
                                                                  {"conv_w", &l.conv_w, false},
                                                                  {"conv_b", &l.conv_b, false},
                                                                  {"x_proj_w", &l.x_proj_w, false},
                                                                  {"dt_proj_w", &l.dt_proj_w, false},
                                                                  {"dt_bias", &l.dt_bias, true},
                                                                  {"a", &l.a, true},
                                                                  {"d", &l.d, true},
                                                                  {"out_proj_w", &l.out_proj_w, false},
                                                                  {"out_proj_b", &l.out_proj_b, false},
                                                                  {"gate_norm_w", &l.gate_norm_w, false}})
      out.emplace_back(p + name, t, f);
  }
  return out;
}

}  // namespace

MambaWeights MambaWeights::build(const Architecture& a, const Placement& pl, const WeightSource& source) {
  return make_shard(a, pl, WeightMaker{&source, nullptr, DType::kF32});
}

MambaWeights MambaWeights::load(const Architecture& a, const Placement& pl, const WeightSource& source, DType dtype,
                                kernels::Backend& backend) {
  MambaWeights m = make_shard(a, pl, WeightMaker{&source, &backend, dtype});
  backend.synchronize();
  return m;
}

MambaWeights MambaWeights::placeholders(const Architecture& a, const Placement& pl, DType dtype) {
  return make_shard(a, pl, WeightMaker{nullptr, nullptr, dtype});
}

MambaWeights MambaWeights::to_dtype(DType d) const {
  MambaWeights m = *this;
  m.dtype = d;
  const bool tied = lm_head.defined() && lm_head.data() == embed.data();
  for (auto& [name, t, fp32] : slots<MambaWeights, Tensor>(m))
    if (t->defined() && !fp32) *t = t->to_dtype(d);
  if (tied) m.lm_head = m.embed;
  return m;
}

std::vector<std::pair<std::string, Tensor>> MambaWeights::named_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, t, fp32] : slots<const MambaWeights, const Tensor>(*this))
    if (t->defined()) out.emplace_back(name, *t);
  return out;
}

int64_t MambaWeights::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, t] : named_tensors()) n += t.numel();
  return n;
}

std::unique_ptr<Weights> MambaWeights::rounded(DType d) const { return std::make_unique<MambaWeights>(to_dtype(d)); }

}  // namespace fk::runner
