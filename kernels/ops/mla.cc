// The ops of multi-head latent attention (MLA: DeepSeek-V2/V3, Kimi K2), in the absorbed
// form vLLM's MLA backends run (vllm/v1/attention/backends/mla): every head attends over
// one shared latent cache, each cached token holding the normalised compressed KV c
// (kv_lora_rank values) and the rotated shared key k_pe (qk_rope_head_dim values).
//
//   mla_cache_write (vLLM concat_and_cache_mla, without paging):
//     kv_c [T, Dc], k_pe [T, Dr] with T = B x q_len; row b q_len + i is written to
//     position q_start + i of sequence b in kv_cache [B, L, Dc + Dr] as [kv_c | k_pe].
//   head_linear (torch.bmm over the heads): a linear map per head,
//     out [T, H, N] = x [T, H, K] . w_h^T with w [H, N, K] (w_kn 0), or x . w_h with
//     w [H, K, N] (w_kn 1). MLA absorbs the up-projection of the keys into the query
//     (q_nope . W_UK: w_kn 1, W_UK [H, qk_nope_head_dim, Dc] straight from kv_b_proj) and
//     of the values into the output (W_UV [H, v_head_dim, Dc], w_kn 0).
//   mla_attention: causal attention of each query head over the latent cache,
//     score(t, h, j) = scale (q_nope[t, h] . c_j + q_pe[t, h] . k_pe_j)
//     out[t, h] = sum_j softmax_j(score) c_j                       ([T, H, Dc])
//     query row t = b q_len + i sits at position q_start + i of sequence b and sees the
//     cached positions j <= q_start + i. MQA with one latent head: keys of Dc + Dr
//     values, the first Dc of them also the values.
// Each CPU baseline accumulates in fp32 and rounds once; the references are fp64.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace fk::kernels {
namespace {

// --- mla_cache_write ----------------------------------------------------------------

enum { kWKvC, kWKPe, kWCache };

template <typename T>
void cache_write(const OpCall& c) {
  const Tensor& cache = c.arg(kWCache);
  const int64_t b = cache.size(0), len = cache.size(1), row = cache.size(2);
  const int64_t dc = c.arg(kWKvC).size(1), dr = c.arg(kWKPe).size(1);
  const int64_t q_len = c.iparam(0), q_start = c.iparam(1);
  const T* kv = c.arg(kWKvC).data_as<T>();
  const T* pe = c.arg(kWKPe).data_as<T>();
  T* dst = cache.data_as<T>();
  for (int64_t s = 0; s < b; ++s)
    for (int64_t i = 0; i < q_len; ++i) {
      const int64_t t = s * q_len + i;
      T* out = dst + (s * len + q_start + i) * row;
      std::memcpy(out, kv + t * dc, static_cast<size_t>(dc) * sizeof(T));
      std::memcpy(out + dc, pe + t * dr, static_cast<size_t>(dr) * sizeof(T));
    }
}

void register_mla_cache_write(OpRegistry& reg) {
  OpDef d;
  d.name = "mla_cache_write";
  d.summary = "write new tokens' compressed KV and rotated shared key into MLA's latent cache";
  d.args = {{"kv_c", ArgRole::kIn}, {"k_pe", ArgRole::kIn}, {"kv_cache", ArgRole::kInOut}};
  d.params = {"q_len", "q_start"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kWKvC, 2), util::check_tensor(c, d, kWKPe, 2),
                                       util::check_tensor(c, d, kWCache, 3), util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    if (c.params.size() != 2) return std::string("mla_cache_write: expects 2 parameters (q_len, q_start)");
    const Tensor& cache = c.arg(kWCache);
    const int64_t q_len = c.iparam(0), q_start = c.iparam(1);
    if (q_len < 1 || q_start < 0 || q_start + q_len > cache.size(1))
      return fmt::format("mla_cache_write: positions [{}, {}) are outside the cache of {}", q_start, q_start + q_len,
                         cache.size(1));
    if (c.arg(kWKvC).size(0) != cache.size(0) * q_len || c.arg(kWKPe).size(0) != c.arg(kWKvC).size(0))
      return fmt::format("mla_cache_write: kv_c and k_pe must have batch x q_len = {} rows", cache.size(0) * q_len);
    if (c.arg(kWKvC).size(1) + c.arg(kWKPe).size(1) != cache.size(2))
      return fmt::format("mla_cache_write: a cache row holds {} values, kv_c and k_pe {} + {}", cache.size(2),
                         c.arg(kWKvC).size(1), c.arg(kWKPe).size(1));
    return std::string();
  };
  d.reference = [](const OpCall& c) { cache_write<double>(c); };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("batch"), dc = s.dim("kv_lora_rank"), dr = s.dim("rope_dim");
    const int64_t q_len = static_cast<int64_t>(s.params.at(0)), q_start = static_cast<int64_t>(s.params.at(1));
    const int64_t len = std::max(s.dim("cache_len"), q_start + q_len);
    return OpCall{
        {util::uniform(dt, {b * q_len, dc}, rng, "kv_c", -1, 1), util::uniform(dt, {b * q_len, dr}, rng, "k_pe", -1, 1),
         util::uniform(dt, {b, len, dc + dr}, rng, "kv_cache", -1, 1)},
        s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"batch", c.arg(kWCache).size(0)},
                    {"kv_lora_rank", c.arg(kWKvC).size(1)},
                    {"rope_dim", c.arg(kWKPe).size(1)},
                    {"cache_len", c.arg(kWCache).size(1)}},
                   c.params};
  };
  d.flops = [](const OpCall&) { return 0.0; };
  d.bytes = [](const OpCall& c) {  // the new rows read and written once
    return 2.0 * static_cast<double>((c.arg(kWKvC).numel() + c.arg(kWKPe).numel()) * dtype_size(c.arg(kWKvC).dtype()));
  };
  reg.add(d);
  reg.add_impl({"mla_cache_write", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kWKvC).dtype(), [&](auto tag) { cache_write<decltype(tag)>(c); });
                }});
}

// --- head_linear --------------------------------------------------------------------

enum { kHOut, kHX, kHW };

struct HeadDims {
  int64_t t, h, k, n;
  bool kn;
};
HeadDims head_dims(const OpCall& c) {
  const Tensor& x = c.arg(kHX);
  const bool kn = c.iparam(0) != 0;
  return HeadDims{x.size(0), x.size(1), x.size(2), kn ? c.arg(kHW).size(2) : c.arg(kHW).size(1), kn};
}

template <typename T, typename A>
void head_linear_run(const OpCall& c) {
  const HeadDims g = head_dims(c);
  const T* x = c.arg(kHX).data_as<T>();
  const T* w = c.arg(kHW).data_as<T>();
  T* out = c.arg(kHOut).data_as<T>();
#pragma omp parallel for schedule(static) if (g.t * g.h * g.n * g.k > 65536)
  for (int64_t r = 0; r < g.t * g.h; ++r) {
    const int64_t h = r % g.h;
    const T* xr = x + r * g.k;
    const T* wh = w + h * g.n * g.k;
    std::vector<A> acc(static_cast<size_t>(g.n), A(0));
    if (g.kn) {  // w_h [K, N]: rows of w scaled by x
      for (int64_t kk = 0; kk < g.k; ++kk) {
        const A xv = cpu::load(xr[kk]);
        const T* wr = wh + kk * g.n;
        for (int64_t n = 0; n < g.n; ++n) acc[static_cast<size_t>(n)] += xv * static_cast<A>(cpu::load(wr[n]));
      }
    } else {  // w_h [N, K]: dot products
      for (int64_t n = 0; n < g.n; ++n) {
        A s = 0;
        for (int64_t kk = 0; kk < g.k; ++kk) s += static_cast<A>(cpu::load(xr[kk])) * cpu::load(wh[n * g.k + kk]);
        acc[static_cast<size_t>(n)] = s;
      }
    }
    for (int64_t n = 0; n < g.n; ++n) out[r * g.n + n] = cpu::put<T>(acc[static_cast<size_t>(n)]);
  }
}

void register_head_linear(OpRegistry& reg) {
  OpDef d;
  d.name = "head_linear";
  d.summary = "a linear map per head (torch.bmm over heads): MLA's absorbed key and value up-projections";
  d.args = {{"out", ArgRole::kOut}, {"x", ArgRole::kIn}, {"weight", ArgRole::kIn}};
  d.params = {"w_kn"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kHOut, 3), util::check_tensor(c, d, kHX, 3),
                                       util::check_tensor(c, d, kHW, 3), util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    if (c.params.size() != 1 || (c.iparam(0) != 0 && c.iparam(0) != 1))
      return std::string("head_linear: expects 1 parameter, w_kn 0 (weight [H, N, K]) or 1 (weight [H, K, N])");
    const HeadDims g = head_dims(c);
    const Tensor& w = c.arg(kHW);
    if (w.size(0) != g.h) return fmt::format("head_linear: weight has {} heads, x {}", w.size(0), g.h);
    if ((g.kn ? w.size(1) : w.size(2)) != g.k)
      return fmt::format("head_linear: weight's input size {} differs from x's {}", g.kn ? w.size(1) : w.size(2), g.k);
    if (c.arg(kHOut).shape() != Shape{g.t, g.h, g.n})
      return fmt::format("head_linear: out must be [tokens, heads, N] = [{}, {}, {}]", g.t, g.h, g.n);
    return std::string();
  };
  d.reference = [](const OpCall& c) { head_linear_run<double, double>(c); };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), h = s.dim("heads"), k = s.dim("in"), n = s.dim("out");
    const bool kn = !s.params.empty() && s.params[0] != 0;
    const float b = 1.0f / std::sqrt(static_cast<float>(k));
    return OpCall{{util::output(dt, {t, h, n}), util::uniform(dt, {t, h, k}, rng, "x", -1, 1),
                   util::uniform(dt, kn ? Shape{h, k, n} : Shape{h, n, k}, rng, "weight", -b, b)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const HeadDims g = head_dims(c);
    return OpShape{{{"tokens", g.t}, {"heads", g.h}, {"in", g.k}, {"out", g.n}}, c.params};
  };
  d.flops = [](const OpCall& c) {
    const HeadDims g = head_dims(c);
    return 2.0 * static_cast<double>(g.t * g.h) * static_cast<double>(g.k * g.n);
  };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"head_linear", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kHX).dtype(), [&](auto tag) { head_linear_run<decltype(tag), float>(c); });
                }});
}

// --- mla_attention ------------------------------------------------------------------

enum { kAOut, kAQNope, kAQPe, kACache };
enum { kAScale, kAQLen, kAQStart };

struct MlaDims {
  int64_t b, len, q_len, q_start, h, dc, dr;
};
MlaDims mla_dims(const OpCall& c) {
  const Tensor& cache = c.arg(kACache);
  return MlaDims{cache.size(0),          cache.size(1),          c.iparam(kAQLen),    c.iparam(kAQStart),
                 c.arg(kAQNope).size(1), c.arg(kAQNope).size(2), c.arg(kAQPe).size(2)};
}

// One query row (t, h): `A` the accumulation type (float in the baseline, double in the
// reference), T the storage type.
template <typename T, typename A>
void mla_attention_run(const OpCall& c) {
  const MlaDims g = mla_dims(c);
  const T* qn = c.arg(kAQNope).data_as<T>();
  const T* qp = c.arg(kAQPe).data_as<T>();
  const T* cache = c.arg(kACache).data_as<T>();
  T* out = c.arg(kAOut).data_as<T>();
  const A scale = static_cast<A>(c.param(kAScale));
  const int64_t row = g.dc + g.dr, rows = g.b * g.q_len * g.h;
#pragma omp parallel
  {
    std::vector<A> q(static_cast<size_t>(row)), score(static_cast<size_t>(g.q_start + g.q_len)),
        acc(static_cast<size_t>(g.dc));
#pragma omp for schedule(dynamic, 4)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t h = r % g.h, t = r / g.h, b = t / g.q_len, p = g.q_start + t % g.q_len;
      for (int64_t e = 0; e < g.dc; ++e) q[static_cast<size_t>(e)] = cpu::load(qn[(t * g.h + h) * g.dc + e]);
      for (int64_t e = 0; e < g.dr; ++e) q[static_cast<size_t>(g.dc + e)] = cpu::load(qp[(t * g.h + h) * g.dr + e]);
      A mx = -std::numeric_limits<A>::infinity();
      for (int64_t j = 0; j <= p; ++j) {
        const T* kr = cache + (b * g.len + j) * row;
        A s = 0;
        for (int64_t e = 0; e < row; ++e) s += q[static_cast<size_t>(e)] * static_cast<A>(cpu::load(kr[e]));
        s *= scale;
        score[static_cast<size_t>(j)] = s;
        mx = std::max(mx, s);
      }
      std::fill(acc.begin(), acc.end(), A(0));
      A sum = 0;
      for (int64_t j = 0; j <= p; ++j) {
        const A w = std::exp(score[static_cast<size_t>(j)] - mx);
        sum += w;
        const T* kr = cache + (b * g.len + j) * row;
        for (int64_t e = 0; e < g.dc; ++e) acc[static_cast<size_t>(e)] += w * static_cast<A>(cpu::load(kr[e]));
      }
      for (int64_t e = 0; e < g.dc; ++e) out[(t * g.h + h) * g.dc + e] = cpu::put<T>(acc[static_cast<size_t>(e)] / sum);
    }
  }
}

void register_mla_attention(OpRegistry& reg) {
  OpDef d;
  d.name = "mla_attention";
  d.summary = "multi-head latent attention over the latent cache, absorbed form (DeepSeek MLA)";
  d.args = {{"out", ArgRole::kOut}, {"q_nope", ArgRole::kIn}, {"q_pe", ArgRole::kIn}, {"kv_cache", ArgRole::kIn}};
  d.params = {"scale", "q_len", "q_start"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kAOut, 3), util::check_tensor(c, d, kAQNope, 3),
                                       util::check_tensor(c, d, kAQPe, 3), util::check_tensor(c, d, kACache, 3),
                                       util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    if (c.params.size() != 3) return std::string("mla_attention: expects 3 parameters (scale, q_len, q_start)");
    const MlaDims g = mla_dims(c);
    if (g.q_len < 1 || g.q_start < 0 || g.q_start + g.q_len > g.len)
      return fmt::format("mla_attention: positions [{}, {}) are outside the cache of {}", g.q_start,
                         g.q_start + g.q_len, g.len);
    if (c.arg(kAQNope).size(0) != g.b * g.q_len)
      return fmt::format("mla_attention: query rows must be batch x q_len = {}", g.b * g.q_len);
    if (c.arg(kAQPe).size(0) != c.arg(kAQNope).size(0) || c.arg(kAQPe).size(1) != g.h)
      return std::string("mla_attention: q_pe must be [tokens, heads, rope_dim] like q_nope's tokens and heads");
    if (g.dc + g.dr != c.arg(kACache).size(2))
      return fmt::format("mla_attention: a cache row holds {} values, q_nope and q_pe {} + {}", c.arg(kACache).size(2),
                         g.dc, g.dr);
    if (c.arg(kAOut).shape() != c.arg(kAQNope).shape())
      return std::string("mla_attention: out and q_nope shapes differ");
    return std::string();
  };
  d.reference = [](const OpCall& c) { mla_attention_run<double, double>(c); };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("batch"), h = s.dim("heads"), dc = s.dim("kv_lora_rank"), dr = s.dim("rope_dim");
    const int64_t q_len = static_cast<int64_t>(s.params.at(kAQLen));
    const int64_t q_start = static_cast<int64_t>(s.params.at(kAQStart));
    const int64_t len = std::max(s.dim("cache_len"), q_start + q_len);
    return OpCall{{util::output(dt, {b * q_len, h, dc}), util::uniform(dt, {b * q_len, h, dc}, rng, "q_nope", -1, 1),
                   util::uniform(dt, {b * q_len, h, dr}, rng, "q_pe", -1, 1),
                   util::uniform(dt, {b, len, dc + dr}, rng, "kv_cache", -1, 1)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const MlaDims g = mla_dims(c);
    return OpShape{{{"batch", g.b}, {"heads", g.h}, {"kv_lora_rank", g.dc}, {"rope_dim", g.dr}, {"cache_len", g.len}},
                   c.params};
  };
  d.flops = [](const OpCall& c) {
    const MlaDims g = mla_dims(c);
    double pairs = 0;
    for (int64_t i = 0; i < g.q_len; ++i) pairs += static_cast<double>(g.q_start + i + 1);
    return 2.0 * pairs * static_cast<double>(g.b * g.h * (2 * g.dc + g.dr));
  };
  d.bytes = [](const OpCall& c) {  // queries and output once, each sequence's cached rows once
    const MlaDims g = mla_dims(c);
    const double es = static_cast<double>(dtype_size(c.arg(kAQNope).dtype()));
    return es * static_cast<double>(2 * c.arg(kAQNope).numel() + c.arg(kAQPe).numel() +
                                    g.b * (g.q_start + g.q_len) * (g.dc + g.dr));
  };
  reg.add(d);
  reg.add_impl({"mla_attention", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kAQNope).dtype(),
                                      [&](auto tag) { mla_attention_run<decltype(tag), float>(c); });
                }});
}

}  // namespace

void register_mla(OpRegistry& reg) {
  register_mla_cache_write(reg);
  register_head_linear(reg);
  register_mla_attention(reg);
}

}  // namespace fk::kernels
