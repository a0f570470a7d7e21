#include "runner/model/convnext/weights.h"

#include "core/spec/families/convnext.h"
#include "runner/model/weight_plan.h"

#include <fmt/format.h>

namespace fk::runner {
namespace {

using spec::Architecture;

struct Gen {
  const spec::ConvNextSpec& c;
  WeightMaker make;

  Tensor vector(const std::string& name, int64_t n, float lo, float hi) const {
    return make(plan_vector(name, n, 0, n, lo, hi));
  }
  Tensor matrix(const std::string& name, int64_t rows, int64_t cols) const {
    const float b = linear_bound(cols);
    return make(plan_block(name, rows, cols, 0, rows, 0, cols, -b, b));
  }

  ConvNextBlockWeights block(const std::string& p, int64_t width) const {
    const int64_t k = c.kernel_size, inner = c.mlp_ratio * width;
    ConvNextBlockWeights w;
    w.dw_w = matrix(p + "dwconv.weight", width, k * k).reshape({width, k, k});
    w.dw_b = vector(p + "dwconv.bias", width, -0.1f, 0.1f);
    w.norm_w = vector(p + "layernorm.weight", width, 0.8f, 1.2f);
    w.norm_b = vector(p + "layernorm.bias", width, -0.1f, 0.1f);
    w.pw1_w = matrix(p + "pwconv1.weight", inner, width);
    w.pw1_b = vector(p + "pwconv1.bias", inner, -0.1f, 0.1f);
    if (c.v2()) {
      w.grn_gamma = vector(p + "grn.weight", inner, -0.5f, 0.5f);
      w.grn_beta = vector(p + "grn.bias", inner, -0.1f, 0.1f);
    }
    w.pw2_w = matrix(p + "pwconv2.weight", width, inner);
    w.pw2_b = vector(p + "pwconv2.bias", width, -0.1f, 0.1f);
    if (!c.v2() && c.layer_scale) w.layer_scale = vector(p + "layer_scale_parameter", width, 0.1f, 1.0f);
    return w;
  }

  ConvNextStageWeights stage(int64_t i) const {
    ConvNextStageWeights s;
    s.index = i;
    const std::string p = fmt::format("encoder.stages.{}.", i);
    const int64_t width = c.width(i);
    if (i > 0) {
      const int64_t prev = c.width(i - 1);
      s.down_norm_w = vector(p + "downsampling_layer.0.weight", prev, 0.8f, 1.2f);
      s.down_norm_b = vector(p + "downsampling_layer.0.bias", prev, -0.1f, 0.1f);
      s.down_w = matrix(p + "downsampling_layer.1.weight", width, prev * 4);
      s.down_b = vector(p + "downsampling_layer.1.bias", width, -0.1f, 0.1f);
    }
    for (int64_t j = 0; j < c.depth(i); ++j) s.blocks.push_back(block(fmt::format("{}layers.{}.", p, j), width));
    return s;
  }
};

ConvNextWeights make_shard(const Architecture& a, const Placement& pl, const WeightMaker& make) {
  const spec::ConvNextSpec& c = a.sections.get<spec::ConvNextSpec>();
  const Gen g{c, make};
  ConvNextWeights m;
  m.dtype = make.made_dtype();
  const int64_t c0 = c.width(0);
  if (pl.first_stage()) {
    m.stem_w = g.matrix("embeddings.patch_embeddings.weight", c0, c.num_channels * c.patch_size * c.patch_size);
    m.stem_b = g.vector("embeddings.patch_embeddings.bias", c0, -0.1f, 0.1f);
    m.stem_norm_w = g.vector("embeddings.layernorm.weight", c0, 0.8f, 1.2f);
    m.stem_norm_b = g.vector("embeddings.layernorm.bias", c0, -0.1f, 0.1f);
  }
  const int64_t first = pl.first_layer(a);
  for (int64_t i = first; i < first + pl.layer_count(a); ++i) m.stages.push_back(g.stage(i));
  if (pl.last_stage()) {
    m.final_norm_w = g.vector("layernorm.weight", a.hidden_size, 0.8f, 1.2f);
    m.final_norm_b = g.vector("layernorm.bias", a.hidden_size, -0.1f, 0.1f);
  }
  return m;
}

template <typename M, typename T>
std::vector<std::pair<std::string, T*>> slots(M& m) {
  std::vector<std::pair<std::string, T*>> out = {
      {"stem_w", &m.stem_w}, {"stem_b", &m.stem_b}, {"stem_norm_w", &m.stem_norm_w}, {"stem_norm_b", &m.stem_norm_b}};
  for (auto& s : m.stages) {
    const std::string p = fmt::format("stages.{}.", s.index);
    out.emplace_back(p + "down_norm_w", &s.down_norm_w);
    out.emplace_back(p + "down_norm_b", &s.down_norm_b);
    out.emplace_back(p + "down_w", &s.down_w);
    out.emplace_back(p + "down_b", &s.down_b);
    for (size_t j = 0; j < s.blocks.size(); ++j) {
      auto& b = s.blocks[j];
      const std::string q = fmt::format("{}blocks.{}.", p, j);
      for (auto [name, t] : std::initializer_list<std::pair<const char*, T*>>{{"dw_w", &b.dw_w},
                                                                              {"dw_b", &b.dw_b},
                                                                              {"norm_w", &b.norm_w},
                                                                              {"norm_b", &b.norm_b},
                                                                              {"pw1_w", &b.pw1_w},
                                                                              {"pw1_b", &b.pw1_b},
                                                                              {"grn_gamma", &b.grn_gamma},
                                                                              {"grn_beta", &b.grn_beta},
                                                                              {"pw2_w", &b.pw2_w},
                                                                              {"pw2_b", &b.pw2_b},
                                                                              {"layer_scale", &b.layer_scale}})
        out.emplace_back(q + name, t);
    }
  }
  out.emplace_back("final_norm_w", &m.final_norm_w);
  out.emplace_back("final_norm_b", &m.final_norm_b);
  return out;
}

}  // namespace

ConvNextWeights ConvNextWeights::build(const Architecture& a, const Placement& pl, const WeightSource& source) {
  return make_shard(a, pl, WeightMaker{&source, nullptr, DType::kF32});
}

ConvNextWeights ConvNextWeights::load(const Architecture& a, const Placement& pl, const WeightSource& source,
                                      DType dtype, kernels::Backend& backend) {
  ConvNextWeights m = make_shard(a, pl, WeightMaker{&source, &backend, dtype});
  backend.synchronize();
  return m;
}

ConvNextWeights ConvNextWeights::placeholders(const Architecture& a, const Placement& pl, DType dtype) {
  return make_shard(a, pl, WeightMaker{nullptr, nullptr, dtype});
}

ConvNextWeights ConvNextWeights::to_dtype(DType d) const {
  ConvNextWeights m = *this;
  m.dtype = d;
  for (auto& [name, t] : slots<ConvNextWeights, Tensor>(m))
    if (t->defined()) *t = t->to_dtype(d);
  return m;
}

std::vector<std::pair<std::string, Tensor>> ConvNextWeights::named_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, t] : slots<const ConvNextWeights, const Tensor>(*this))
    if (t->defined()) out.emplace_back(name, *t);
  return out;
}

int64_t ConvNextWeights::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, t] : named_tensors()) n += t.numel();
  return n;
}

std::unique_ptr<Weights> ConvNextWeights::rounded(DType d) const {
  return std::make_unique<ConvNextWeights>(to_dtype(d));
}

}  // namespace fk::runner
