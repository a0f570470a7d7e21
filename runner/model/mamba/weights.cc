#include "runner/model/mamba/weights.h"

#include "core/spec/families/mamba.h"
#include "runner/model/mamba/ssm_mixers.h"
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

  // Mamba-2's layer on this rank: its heads and groups (tp divides num_heads and
  // n_groups: core/spec/families/mamba.cc), as ssd_plans lays them out.
  MambaLayerWeights layer2(int64_t l) const {
    const spec::SsmSpec& s = a.sections.get<spec::SsmSpec>();
    const SsdMixerShape shape{pl.tp, pl.tp_rank, inter(), s.num_heads, s.n_groups, s.head_dim, s.state_size};
    const SsdPlans p = ssd_plans([&](const char* rest) { return name(l, (std::string("mixer.") + rest).c_str()); },
                                 a.hidden_size, shape, s.conv_kernel, s.conv_bias, s.proj_bias);
    MambaLayerWeights w;
    w.index = l;
    w.norm_w = make(plan_vector(name(l, "norm.weight"), a.hidden_size, 0, a.hidden_size, 0.8f, 1.2f));
    w.ssd.in_proj_w = make(p.in_proj_w);
    if (p.in_proj_b) w.ssd.in_proj_b = make(*p.in_proj_b);
    w.ssd.conv_w = make(p.conv_w);
    if (p.conv_b) w.ssd.conv_b = make(*p.conv_b);
    w.ssd.dt_bias = make.fp32(p.dt_bias);
    w.ssd.a = make.fp32(p.a_log, neg_exp);
    w.ssd.d = make.fp32(p.d);
    w.ssd.gate_norm_w = make(p.gate_norm_w);
    w.ssd.out_proj_w = make(p.out_proj_w);
    if (p.out_proj_b) w.ssd.out_proj_b = make(*p.out_proj_b);
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
    w.selective.in_proj_w = make(plan_concat_rows({plan_block(in, 2 * i, h, i0(), il(), 0, h, -bh, bh),
                                                   plan_block(in, 2 * i, h, i + i0(), il(), 0, h, -bh, bh)}));
    if (s.proj_bias) {
      const std::string inb = name(l, "mixer.in_proj.bias");
      w.selective.in_proj_b = make(plan_concat_vectors(
          {plan_vector(inb, 2 * i, i0(), il(), -0.1f, 0.1f), plan_vector(inb, 2 * i, i + i0(), il(), -0.1f, 0.1f)}));
    }
    w.selective.conv_w = make(channel_rows(name(l, "mixer.conv1d.weight"), s.conv_kernel, linear_bound(s.conv_kernel)));
    if (s.conv_bias) w.selective.conv_b = make(channel_vector(name(l, "mixer.conv1d.bias"), -0.1f, 0.1f));
    const float bi = linear_bound(i);
    w.selective.x_proj_w =
        make(plan_block(name(l, "mixer.x_proj.weight"), r + 2 * n, i, 0, r + 2 * n, i0(), il(), -bi, bi));
    w.selective.dt_proj_w = make(channel_rows(name(l, "mixer.dt_proj.weight"), r, linear_bound(r)));
    w.selective.dt_bias = make.fp32(channel_vector(name(l, "mixer.dt_proj.bias"), -4.6f, -2.3f));
    const float log_n = std::log(static_cast<float>(std::max<int64_t>(n, 2)));
    w.selective.a = make.fp32(plan_block(name(l, "mixer.A_log"), i, n, i0(), il(), 0, n, 0.0f, log_n), neg_exp);
    w.selective.d = make.fp32(channel_vector(name(l, "mixer.D"), 0.5f, 1.5f));
    w.selective.out_proj_w = make(plan_block(name(l, "mixer.out_proj.weight"), h, i, 0, h, i0(), il(), -bi, bi));
    if (s.proj_bias) w.selective.out_proj_b = make(plan_vector(name(l, "mixer.out_proj.bias"), h, 0, h, -0.1f, 0.1f));
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
    // One mixer's tensors are defined (Mamba-1's or Mamba-2's), so no name repeats.
    auto& v1 = l.selective;
    auto& v2 = l.ssd;
    for (auto [name, t, f] :
         std::initializer_list<std::tuple<const char*, T*, bool>>{{"norm_w", &l.norm_w, false},
                                                                  {"in_proj_w", &v1.in_proj_w, false},
                                                                  {"in_proj_b", &v1.in_proj_b, false},
                                                                  {"conv_w", &v1.conv_w, false},
                                                                  {"conv_b", &v1.conv_b, false},
                                                                  {"x_proj_w", &v1.x_proj_w, false},
                                                                  {"dt_proj_w", &v1.dt_proj_w, false},
                                                                  {"dt_bias", &v1.dt_bias, true},
                                                                  {"a", &v1.a, true},
                                                                  {"d", &v1.d, true},
                                                                  {"out_proj_w", &v1.out_proj_w, false},
                                                                  {"out_proj_b", &v1.out_proj_b, false},
                                                                  {"in_proj_w", &v2.in_proj_w, false},
                                                                  {"in_proj_b", &v2.in_proj_b, false},
                                                                  {"conv_w", &v2.conv_w, false},
                                                                  {"conv_b", &v2.conv_b, false},
                                                                  {"dt_bias", &v2.dt_bias, true},
                                                                  {"a", &v2.a, true},
                                                                  {"d", &v2.d, true},
                                                                  {"gate_norm_w", &v2.gate_norm_w, false},
                                                                  {"out_proj_w", &v2.out_proj_w, false},
                                                                  {"out_proj_b", &v2.out_proj_b, false}})
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
