// topk_softmax (vLLM: topk_softmax(topk_weights, topk_indices, token_expert_indices,
// gating_output), without the third output): softmax over the experts' router
// logits gating_output [T, E] (fp32 math), then the k largest probabilities and their
// expert ids (ties: lower id first). With renormalize != 0 the k weights are divided
// by their sum (Mixtral, Qwen3-MoE's norm_topk_prob). Weights are fp32, ids int32.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace fk::kernels {
namespace {

enum { kWeights, kIds, kGating };

template <typename F, typename Load>
void topk_row(int64_t e, int64_t k, bool renorm, Load load, F* weights, int32_t* ids) {
  std::vector<F> p(static_cast<size_t>(e));
  F mx = load(0);
  for (int64_t j = 1; j < e; ++j) mx = std::max(mx, load(j));
  F sum = 0;
  for (int64_t j = 0; j < e; ++j) sum += p[static_cast<size_t>(j)] = std::exp(load(j) - mx);
  std::vector<int32_t> order(static_cast<size_t>(e));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)] || (p[static_cast<size_t>(a)] == p[static_cast<size_t>(b)] && a < b);
  });
  F chosen = 0;
  for (int64_t i = 0; i < k; ++i) chosen += p[static_cast<size_t>(order[static_cast<size_t>(i)])] / sum;
  for (int64_t i = 0; i < k; ++i) {
    const F w = p[static_cast<size_t>(order[static_cast<size_t>(i)])] / sum;
    weights[i] = renorm ? w / chosen : w;
    ids[i] = order[static_cast<size_t>(i)];
  }
}

template <typename T>
void topk_cpu(const OpCall& c) {
  const int64_t t = c.arg(kGating).size(0), e = c.arg(kGating).size(1), k = c.arg(kWeights).size(1);
  const T* g = c.arg(kGating).data_as<T>();
  float* w = c.arg(kWeights).data_as<float>();
  int32_t* ids = c.arg(kIds).data_as<int32_t>();
  const bool renorm = c.iparam(0) != 0;
#pragma omp parallel for schedule(static) if (t * e > 65536)
  for (int64_t r = 0; r < t; ++r)
    topk_row<float>(e, k, renorm, [&](int64_t j) { return cpu::load(g[r * e + j]); }, w + r * k, ids + r * k);
}

}  // namespace

void register_topk_softmax(OpRegistry& reg) {
  OpDef d;
  d.name = "topk_softmax";
  d.summary = "MoE router: softmax over experts, top-k weights and ids, optional renormalisation";
  d.args = {{"topk_weights", ArgRole::kOut, true, false, true}, {"topk_ids", ArgRole::kOut, false}, {"gating_output", ArgRole::kIn}};
  d.params = {"renormalize"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kWeights, 2, {DType::kF32, DType::kF64}),
                                       util::check_tensor(c, d, kIds, 2, {DType::kI32}),
                                       util::check_tensor(c, d, kGating, 2)});
    if (!e.empty()) return e;
    if (c.arg(kIds).shape() != c.arg(kWeights).shape()) return std::string("topk_softmax: weights and ids differ in shape");
    if (c.arg(kWeights).size(0) != c.arg(kGating).size(0)) return std::string("topk_softmax: token counts differ");
    if (c.arg(kWeights).size(1) > c.arg(kGating).size(1) || c.arg(kWeights).size(1) < 1)
      return std::string("topk_softmax: k must be in [1, experts]");
    return std::string();
  };
  d.reference = [](const OpCall& c) {
    const int64_t t = c.arg(kGating).size(0), e = c.arg(kGating).size(1), k = c.arg(kWeights).size(1);
    const double* g = util::f64(c.arg(kGating));
    for (int64_t r = 0; r < t; ++r)
      topk_row<double>(e, k, c.iparam(0) != 0, [&](int64_t j) { return g[r * e + j]; },
                       util::f64(c.arg(kWeights)) + r * k, c.arg(kIds).data_as<int32_t>() + r * k);
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), e = s.dim("experts"), k = s.dim("k");
    return OpCall{{util::output(DType::kF32, {t, k}), util::output(DType::kI32, {t, k}),
                   util::uniform(dt, {t, e}, rng, "gating_output", -3, 3)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", c.arg(kGating).size(0)}, {"experts", c.arg(kGating).size(1)}, {"k", c.arg(kWeights).size(1)}},
                   c.params};
  };
  d.flops = [](const OpCall& c) { return 4.0 * static_cast<double>(c.arg(kGating).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"topk_softmax", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kGating).dtype(), [&](auto tag) { topk_cpu<decltype(tag)>(c); });
                }});
}

}  // namespace fk::kernels
