// grouped_topk (vLLM: grouped_topk(hidden_states, gating_output, topk, renormalize,
// num_expert_group, topk_group, scoring_func, routed_scaling_factor,
// e_score_correction_bias); DeepSeek-V2/V3's router): the experts' router logits
// gating_output [T, E] become scores (softmax over the experts, or sigmoid each; fp32
// math), the E experts fall into num_expert_group groups of E / groups consecutive
// experts, and only the topk_group best groups compete for the k experts.
//   choice  = scores + e_score_correction_bias (when given: DeepSeek-V3's noaux_tc), else
//             scores
//   a group's score: with the bias, the sum of its two largest choice values; without,
//             its largest score (vLLM; HF DeepseekV3TopkRouter, DeepSeek-V2's
//             group_limited_greedy)
//   the topk_group best groups (ties: lower group first); the k largest choice values
//   among their experts (ties: lower id first) give topk_ids
//   topk_weights = the chosen experts' scores (not choice: the bias only steers the
//             choice), divided by their sum when renormalize != 0, then times
//             routed_scaling_factor.
// Weights are fp32, ids int32; the bias, when given, fp32 [E].
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace fk::kernels {
namespace {

enum { kWeights, kIds, kGating, kBias };
enum { kGroups, kTopkGroup, kRenormalize, kScoring, kScale };

struct Routing {
  int64_t experts, k, groups, topk_group;
  bool renormalize, sigmoid, biased;
  double scale;
};

Routing routing(const OpCall& c) {
  return Routing{
      c.arg(kGating).size(1),      c.arg(kWeights).size(1), c.iparam(kGroups),           c.iparam(kTopkGroup),
      c.iparam(kRenormalize) != 0, c.iparam(kScoring) == 1, util::present(c.arg(kBias)), c.param(kScale)};
}

// One token: `load(j)` its logit of expert j, `bias(j)` the correction.
template <typename F, typename Load, typename Bias>
void route_row(const Routing& r, Load load, Bias bias, F* weights, int32_t* ids) {
  const int64_t e = r.experts, per = e / r.groups;
  std::vector<F> score(static_cast<size_t>(e)), choice(static_cast<size_t>(e));
  if (r.sigmoid) {
    for (int64_t j = 0; j < e; ++j) score[static_cast<size_t>(j)] = F(1) / (F(1) + std::exp(-load(j)));
  } else {
    F mx = load(0);
    for (int64_t j = 1; j < e; ++j) mx = std::max(mx, load(j));
    F sum = 0;
    for (int64_t j = 0; j < e; ++j) sum += score[static_cast<size_t>(j)] = std::exp(load(j) - mx);
    for (F& s : score) s /= sum;
  }
  for (int64_t j = 0; j < e; ++j)
    choice[static_cast<size_t>(j)] = score[static_cast<size_t>(j)] + (r.biased ? bias(j) : F(0));
  std::vector<F> group_score(static_cast<size_t>(r.groups));
  for (int64_t g = 0; g < r.groups; ++g) {
    const F* c = choice.data() + g * per;
    if (r.biased) {  // the two largest (a group of one counts its only expert once)
      F a = -std::numeric_limits<F>::infinity(), b = a;
      for (int64_t j = 0; j < per; ++j) {
        if (c[j] > a) {
          b = a;
          a = c[j];
        } else if (c[j] > b) {
          b = c[j];
        }
      }
      group_score[static_cast<size_t>(g)] = per > 1 ? a + b : a;
    } else {
      group_score[static_cast<size_t>(g)] = *std::max_element(c, c + per);
    }
  }
  std::vector<int64_t> order(static_cast<size_t>(r.groups));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return group_score[static_cast<size_t>(a)] > group_score[static_cast<size_t>(b)];
  });
  std::vector<char> open(static_cast<size_t>(r.groups), 0);
  for (int64_t i = 0; i < r.topk_group; ++i) open[static_cast<size_t>(order[static_cast<size_t>(i)])] = 1;
  std::vector<int32_t> cand;
  for (int64_t j = 0; j < e; ++j)
    if (open[static_cast<size_t>(j / per)]) cand.push_back(static_cast<int32_t>(j));
  std::partial_sort(cand.begin(), cand.begin() + r.k, cand.end(), [&](int32_t a, int32_t b) {
    const F ca = choice[static_cast<size_t>(a)], cb = choice[static_cast<size_t>(b)];
    return ca > cb || (ca == cb && a < b);
  });
  F chosen = 0;
  for (int64_t i = 0; i < r.k; ++i) chosen += score[static_cast<size_t>(cand[static_cast<size_t>(i)])];
  for (int64_t i = 0; i < r.k; ++i) {
    const F w = score[static_cast<size_t>(cand[static_cast<size_t>(i)])];
    weights[i] = static_cast<F>((r.renormalize ? w / chosen : w) * static_cast<F>(r.scale));
    ids[i] = cand[static_cast<size_t>(i)];
  }
}

template <typename T>
void grouped_topk_cpu(const OpCall& c) {
  const Routing r = routing(c);
  const int64_t t = c.arg(kGating).size(0);
  const T* g = c.arg(kGating).data_as<T>();
  const Tensor& b = c.arg(kBias);
  const bool f64_bias = r.biased && b.dtype() == DType::kF64;
  float* w = c.arg(kWeights).data_as<float>();
  int32_t* ids = c.arg(kIds).data_as<int32_t>();
#pragma omp parallel for schedule(static) if (t * r.experts > 65536)
  for (int64_t row = 0; row < t; ++row)
    route_row<float>(
        r, [&](int64_t j) { return cpu::load(g[row * r.experts + j]); },
        [&](int64_t j) { return f64_bias ? static_cast<float>(b.data_as<double>()[j]) : b.data_as<float>()[j]; },
        w + row * r.k, ids + row * r.k);
}

std::string check(const OpDef& d, const OpCall& c) {
  std::string e =
      util::first_error({util::check_tensor(c, d, kWeights, 2, {DType::kF32, DType::kF64}),
                         util::check_tensor(c, d, kIds, 2, {DType::kI32}), util::check_tensor(c, d, kGating, 2)});
  if (!e.empty()) return e;
  if (c.params.size() != d.params.size())
    return fmt::format("grouped_topk: takes {} parameters ({}), got {}", d.params.size(), fmt::join(d.params, ", "),
                       c.params.size());
  const Routing r = routing(c);
  if (c.arg(kIds).shape() != c.arg(kWeights).shape())
    return std::string("grouped_topk: weights and ids differ in shape");
  if (c.arg(kWeights).size(0) != c.arg(kGating).size(0)) return std::string("grouped_topk: token counts differ");
  if (r.groups < 1 || r.experts % r.groups != 0)
    return fmt::format("grouped_topk: num_expert_group {} must divide the experts ({})", r.groups, r.experts);
  if (r.topk_group < 1 || r.topk_group > r.groups)
    return fmt::format("grouped_topk: topk_group {} must be in [1, num_expert_group = {}]", r.topk_group, r.groups);
  if (r.k < 1 || r.k > r.topk_group * (r.experts / r.groups))
    return fmt::format("grouped_topk: k {} must be in [1, topk_group x experts per group = {}]", r.k,
                       r.topk_group * (r.experts / r.groups));
  if (c.iparam(kScoring) != 0 && c.iparam(kScoring) != 1)
    return fmt::format("grouped_topk: scoring {} is not 0 (softmax) or 1 (sigmoid)", c.param(kScoring));
  if (!std::isfinite(r.scale) || r.scale <= 0)
    return fmt::format("grouped_topk: routed_scaling_factor {} must be positive", r.scale);
  if (r.biased) {
    if (std::string m = util::check_tensor(c, d, kBias, 1, {DType::kF32, DType::kF64}); !m.empty()) return m;
    if (c.arg(kBias).size(0) != r.experts)
      return fmt::format("grouped_topk: e_score_correction_bias has {} entries for {} experts", c.arg(kBias).size(0),
                         r.experts);
  }
  return std::string();
}

}  // namespace

void register_grouped_topk(OpRegistry& reg) {
  OpDef d;
  d.name = "grouped_topk";
  d.summary = "MoE router with expert groups (DeepSeek): softmax or sigmoid scores, best groups, top-k, bias, scale";
  d.args = {{"topk_weights", ArgRole::kOut, true, false, true},
            {"topk_ids", ArgRole::kOut, false},
            {"gating_output", ArgRole::kIn},
            {"e_score_correction_bias", ArgRole::kIn, true, true, true}};
  d.params = {"num_expert_group", "topk_group", "renormalize", "scoring", "routed_scaling_factor"};
  d.check = [d](const OpCall& c) { return check(d, c); };
  d.reference = [](const OpCall& c) {
    const Routing r = routing(c);
    const int64_t t = c.arg(kGating).size(0);
    const double* g = util::f64(c.arg(kGating));
    const double* b = r.biased ? util::f64(c.arg(kBias)) : nullptr;
    for (int64_t row = 0; row < t; ++row)
      route_row<double>(
          r, [&](int64_t j) { return g[row * r.experts + j]; }, [&](int64_t j) { return b[j]; },
          util::f64(c.arg(kWeights)) + row * r.k, c.arg(kIds).data_as<int32_t>() + row * r.k);
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), e = s.dim("experts"), k = s.dim("k");
    return OpCall{
        {util::output(DType::kF32, {t, k}), util::output(DType::kI32, {t, k}),
         util::uniform(dt, {t, e}, rng, "gating_output", -3, 3),
         s.dim("bias") != 0 ? util::uniform(DType::kF32, {e}, rng, "e_score_correction_bias", 0, 0.2f) : util::none()},
        s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", c.arg(kGating).size(0)},
                    {"experts", c.arg(kGating).size(1)},
                    {"k", c.arg(kWeights).size(1)},
                    {"bias", util::present(c.arg(kBias)) ? 1 : 0}},
                   c.params};
  };
  d.flops = [](const OpCall& c) { return 6.0 * static_cast<double>(c.arg(kGating).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"grouped_topk", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kGating).dtype(), [&](auto tag) { grouped_topk_cpu<decltype(tag)>(c); });
                }});
}

}  // namespace fk::kernels
