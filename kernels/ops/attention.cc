// attention: scaled dot-product attention of queries against a contiguous KV cache.
//
//   out [T, Hq, D], query [T, Hq, D], key_cache / value_cache [B, L, Hk, D]
//   T = B * q_len: query row b * q_len + i sits at position p = q_start + i of
//   sequence b and sees keys j < q_start + q_len with
//     causal:  j <= p, and p - j < window when window > 0 (sliding window of `window`
//              positions including p itself, as HF's sliding-window mask);
//     not causal (encoders): every j < q_start + q_len, and |p - j| < window when
//              window > 0 (a band of `window` positions on each side, p included:
//              ModernBERT's local layers, whose window of local_attention reaches
//              local_attention / 2 positions each way, take window = local_attention / 2 + 1).
//   scores = scale * q.k; soft-capping (Gemma 2) replaces s by cap * tanh(s / cap);
//   GQA/MQA: query head h reads kv head h / (Hq / Hk).
//   sinks (optional, fp32 [Hq]; gpt-oss): head h's softmax also counts a key with the
//   score sinks[h] (after scale and soft-cap) and no value, so the weights of the real
//   keys sum to less than 1: w_j = exp(s_j) / (exp(sinks[h]) + sum_k exp(s_k)).
// Prefill calls it with q_start 0 and q_len = prompt length, decode with q_len 1 and
// q_start = tokens already cached. The CPU baseline streams over keys per query row
// (fp32 scores, max-subtracted softmax); the reference is fp64.
//
// cross_attention: an encoder-decoder's attention of the decoder's queries over the
// encoder's keys and values (Whisper, T5):
//   out [T, Hq, D], query [T, Hq, D], key / value [B, S, Hk, D], T = B * q_len;
//   every query row of sequence b sees all S keys of b, whatever its position (no mask);
//   scores = scale * q.k; GQA as above. The same code as attention's, with S keys.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cmath>
#include <limits>
#include <vector>

namespace fk::kernels {
namespace {

enum { kOut, kQuery, kKeyCache, kValueCache, kSinks };
enum { kScale, kQLen, kQStart, kCausal, kWindow, kSoftcap };

struct Geometry {
  int64_t b, q_len, q_start, kv_len, hq, hk, d;
  bool causal;
  int64_t window;
  double softcap;
  bool sinks;
  int64_t first_key(int64_t p) const { return window > 0 ? std::max<int64_t>(0, p - window + 1) : 0; }
  int64_t end_key(int64_t p) const {
    if (causal) return p + 1;
    return window > 0 ? std::min<int64_t>(kv_len, p + window) : kv_len;
  }
};

Geometry geometry(const OpCall& c) {
  Geometry g;
  g.b = c.arg(kKeyCache).size(0);
  g.q_len = c.iparam(kQLen);
  g.q_start = c.iparam(kQStart);
  g.kv_len = g.q_start + g.q_len;
  g.hq = c.arg(kQuery).size(1);
  g.hk = c.arg(kKeyCache).size(2);
  g.d = c.arg(kQuery).size(2);
  g.causal = c.iparam(kCausal) != 0;
  g.window = c.iparam(kWindow);
  g.softcap = c.param(kSoftcap);
  g.sinks = util::present(c.arg(kSinks));
  return g;
}

// cross_attention's geometry: S = key.size(1) keys for every row.
enum { kCrossScale, kCrossQLen };
Geometry cross_geometry(const OpCall& c) {
  Geometry g;
  g.b = c.arg(kKeyCache).size(0);
  g.q_len = c.iparam(kCrossQLen);
  g.q_start = 0;
  g.kv_len = c.arg(kKeyCache).size(1);
  g.hq = c.arg(kQuery).size(1);
  g.hk = c.arg(kKeyCache).size(2);
  g.d = c.arg(kQuery).size(2);
  g.causal = false;
  g.window = 0;
  g.softcap = 0;
  g.sinks = false;
  return g;
}

// Both ops' CPU baseline and fp64 reference, over the geometry g of call c (the scale
// is parameter 0 of both; sinks are read only when g.sinks).
template <typename T>
void attention_cpu(const OpCall& c, const Geometry& g) {
  const int64_t L = c.arg(kKeyCache).size(1);
  const T* q = c.arg(kQuery).data_as<T>();
  const T* kc = c.arg(kKeyCache).data_as<T>();
  const T* vc = c.arg(kValueCache).data_as<T>();
  T* out = c.arg(kOut).data_as<T>();
  const float scale = static_cast<float>(c.param(kScale));
  const float cap = static_cast<float>(g.softcap);
  // Read in their own dtype: fp32, or fp64 (the op's check accepts both).
  std::vector<float> sink(static_cast<size_t>(g.sinks ? g.hq : 0));
  for (int64_t h = 0; h < static_cast<int64_t>(sink.size()); ++h)
    sink[static_cast<size_t>(h)] = c.arg(kSinks).dtype() == DType::kF64
                                       ? static_cast<float>(c.arg(kSinks).data_as<double>()[h])
                                       : c.arg(kSinks).data_as<float>()[h];
  const float* sinks = g.sinks ? sink.data() : nullptr;
  const int64_t rows = g.b * g.q_len * g.hq;
#pragma omp parallel
  {
    std::vector<float> scores(static_cast<size_t>(g.kv_len)), acc(static_cast<size_t>(g.d)), qf(static_cast<size_t>(g.d));
#pragma omp for schedule(dynamic, 4)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t h = r % g.hq, t = r / g.hq, b = t / g.q_len, i = t % g.q_len;
      const int64_t p = g.q_start + i, kvh = h / (g.hq / g.hk);
      const int64_t j0 = g.first_key(p), j1 = g.end_key(p);
      const T* qr = q + (t * g.hq + h) * g.d;
      for (int64_t e = 0; e < g.d; ++e) qf[static_cast<size_t>(e)] = cpu::load(qr[e]);
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = j0; j < j1; ++j) {
        const T* kr = kc + ((b * L + j) * g.hk + kvh) * g.d;
        float s = 0;
        for (int64_t e = 0; e < g.d; ++e) s += qf[static_cast<size_t>(e)] * cpu::load(kr[e]);
        s *= scale;
        if (cap > 0) s = cap * std::tanh(s / cap);
        scores[static_cast<size_t>(j)] = s;
        mx = std::max(mx, s);
      }
      if (sinks != nullptr) mx = std::max(mx, sinks[h]);
      std::fill(acc.begin(), acc.end(), 0.0f);
      float sum = sinks != nullptr ? std::exp(sinks[h] - mx) : 0.0f;
      for (int64_t j = j0; j < j1; ++j) {
        const float w = std::exp(scores[static_cast<size_t>(j)] - mx);
        sum += w;
        const T* vr = vc + ((b * L + j) * g.hk + kvh) * g.d;
        for (int64_t e = 0; e < g.d; ++e) acc[static_cast<size_t>(e)] += w * cpu::load(vr[e]);
      }
      T* orow = out + (t * g.hq + h) * g.d;
      const float inv = sum > 0 ? 1.0f / sum : 0.0f;
      for (int64_t e = 0; e < g.d; ++e) orow[e] = cpu::store<T>(acc[static_cast<size_t>(e)] * inv);
    }
  }
}

void attention_reference(const OpCall& c, const Geometry& g) {
  const int64_t L = c.arg(kKeyCache).size(1);
  const double *q = util::f64(c.arg(kQuery)), *kc = util::f64(c.arg(kKeyCache)), *vc = util::f64(c.arg(kValueCache));
  double* out = util::f64(c.arg(kOut));
  const double* sinks = g.sinks ? util::f64(c.arg(kSinks)) : nullptr;
  // Rows are independent: one per thread (a full-size prefill is seconds, not minutes).
#pragma omp parallel for schedule(dynamic, 4) if (g.b * g.q_len * g.hq > 64)
  for (int64_t t = 0; t < g.b * g.q_len; ++t) {
    std::vector<double> s(static_cast<size_t>(g.kv_len));
    for (int64_t h = 0; h < g.hq; ++h) {
      const int64_t b = t / g.q_len, p = g.q_start + t % g.q_len, kvh = h / (g.hq / g.hk);
      const int64_t j0 = g.first_key(p), j1 = g.end_key(p);
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = j0; j < j1; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < g.d; ++e) dot += q[(t * g.hq + h) * g.d + e] * kc[((b * L + j) * g.hk + kvh) * g.d + e];
        dot *= c.param(kScale);
        if (g.softcap > 0) dot = g.softcap * std::tanh(dot / g.softcap);
        s[static_cast<size_t>(j)] = dot;
        mx = std::max(mx, dot);
      }
      if (sinks != nullptr) mx = std::max(mx, sinks[h]);
      double sum = sinks != nullptr ? std::exp(sinks[h] - mx) : 0.0;
      for (int64_t j = j0; j < j1; ++j) {
        s[static_cast<size_t>(j)] = std::exp(s[static_cast<size_t>(j)] - mx);
        sum += s[static_cast<size_t>(j)];
      }
      for (int64_t e = 0; e < g.d; ++e) {
        double acc = 0;
        for (int64_t j = j0; j < j1; ++j) acc += s[static_cast<size_t>(j)] * vc[((b * L + j) * g.hk + kvh) * g.d + e];
        out[(t * g.hq + h) * g.d + e] = acc / sum;
      }
    }
  }
}

}  // namespace

void register_attention(OpRegistry& reg) {
  OpDef d;
  d.name = "attention";
  d.summary = "attention over a contiguous KV cache (causal/bidirectional, GQA, sliding window, soft-cap, sinks)";
  d.args = {{"out", ArgRole::kOut},
            {"query", ArgRole::kIn},
            {"key_cache", ArgRole::kIn},
            {"value_cache", ArgRole::kIn},
            {"sinks", ArgRole::kIn, true, true, true}};
  d.params = {"scale", "q_len", "q_start", "causal", "window", "softcap"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kOut, 3), util::check_tensor(c, d, kQuery, 3),
                                       util::check_tensor(c, d, kKeyCache, 4), util::check_tensor(c, d, kValueCache, 4),
                                       util::check_tensor(c, d, kSinks, 1, {DType::kF32, DType::kF64}),
                                       util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    if (c.params.size() != 6) return std::string("attention: expects 6 parameters");
    const Geometry g = geometry(c);
    if (c.arg(kOut).shape() != c.arg(kQuery).shape()) return std::string("attention: out and query shapes differ");
    if (c.arg(kValueCache).shape() != c.arg(kKeyCache).shape())
      return std::string("attention: key_cache and value_cache shapes differ");
    if (g.q_len < 1 || g.q_start < 0 || g.kv_len > c.arg(kKeyCache).size(1))
      return std::string("attention: q_start + q_len exceeds the cache length");
    if (c.arg(kQuery).size(0) != g.b * g.q_len)
      return std::string("attention: query rows must be batch x q_len");
    if (g.hk < 1 || g.hq % g.hk != 0) return std::string("attention: kv heads must divide query heads");
    if (c.arg(kKeyCache).size(3) != g.d) return std::string("attention: head_dim of query and cache differ");
    if (g.window < 0) return std::string("attention: window must be >= 0");
    if (g.sinks && c.arg(kSinks).size(0) != g.hq) return std::string("attention: sinks must be [q_heads]");
    return std::string();
  };
  d.reference = [](const OpCall& c) { attention_reference(c, geometry(c)); };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("batch"), hq = s.dim("q_heads"), hk = s.dim("kv_heads"), hd = s.dim("head_dim");
    const int64_t q_len = static_cast<int64_t>(s.params.at(kQLen));
    const int64_t q_start = static_cast<int64_t>(s.params.at(kQStart));
    const int64_t L = std::max(s.dim("cache_len"), q_start + q_len);
    return OpCall{{util::output(dt, {b * q_len, hq, hd}), util::uniform(dt, {b * q_len, hq, hd}, rng, "query", -1, 1),
                   util::uniform(dt, {b, L, hk, hd}, rng, "key_cache", -1, 1),
                   util::uniform(dt, {b, L, hk, hd}, rng, "value_cache", -1, 1),
                   s.dims.count("sinks") && s.dim("sinks") ? util::uniform(DType::kF32, {hq}, rng, "sinks", -2, 2)
                                                           : util::none()},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"batch", c.arg(kKeyCache).size(0)},
                    {"q_heads", c.arg(kQuery).size(1)},
                    {"kv_heads", c.arg(kKeyCache).size(2)},
                    {"head_dim", c.arg(kQuery).size(2)},
                    {"cache_len", c.arg(kKeyCache).size(1)},
                    {"sinks", util::present(c.arg(kSinks)) ? 1 : 0}},
                   c.params};
  };
  d.flops = [](const OpCall& c) {
    const Geometry g = geometry(c);
    double pairs = 0;
    for (int64_t i = 0; i < g.q_len; ++i) {
      const int64_t p = g.q_start + i;
      pairs += static_cast<double>(g.end_key(p) - g.first_key(p));
    }
    return 4.0 * pairs * static_cast<double>(g.b * g.hq * g.d);
  };
  d.bytes = [](const OpCall& c) {
    const Geometry g = geometry(c);
    const double es = static_cast<double>(dtype_size(c.arg(kQuery).dtype()));
    return es * (2.0 * static_cast<double>(c.arg(kQuery).numel()) +
                 2.0 * static_cast<double>(g.b * g.kv_len * g.hk * g.d));
  };
  reg.add(d);
  reg.add_impl({"attention", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kQuery).dtype(),
                                      [&](auto tag) { attention_cpu<decltype(tag)>(c, geometry(c)); });
                }});
}

void register_cross_attention(OpRegistry& reg) {
  OpDef d;
  d.name = "cross_attention";
  d.summary = "attention of decoder queries over every position of the encoder's keys and values (GQA)";
  d.args = {{"out", ArgRole::kOut}, {"query", ArgRole::kIn}, {"key", ArgRole::kIn}, {"value", ArgRole::kIn}};
  d.params = {"scale", "q_len"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kOut, 3), util::check_tensor(c, d, kQuery, 3),
                                       util::check_tensor(c, d, kKeyCache, 4), util::check_tensor(c, d, kValueCache, 4),
                                       util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    if (c.params.size() != 2) return std::string("cross_attention: expects 2 parameters");
    const Geometry g = cross_geometry(c);
    if (c.arg(kOut).shape() != c.arg(kQuery).shape())
      return std::string("cross_attention: out and query shapes differ");
    if (c.arg(kValueCache).shape() != c.arg(kKeyCache).shape())
      return std::string("cross_attention: key and value shapes differ");
    if (g.q_len < 1) return std::string("cross_attention: q_len must be >= 1");
    if (g.kv_len < 1) return std::string("cross_attention: the encoder has no positions (key is [B, 0, ...])");
    if (c.arg(kQuery).size(0) != g.b * g.q_len) return std::string("cross_attention: query rows must be batch x q_len");
    if (g.hk < 1 || g.hq % g.hk != 0) return std::string("cross_attention: kv heads must divide query heads");
    if (c.arg(kKeyCache).size(3) != g.d) return std::string("cross_attention: head_dim of query and key differ");
    return std::string();
  };
  d.reference = [](const OpCall& c) { attention_reference(c, cross_geometry(c)); };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("batch"), hq = s.dim("q_heads"), hk = s.dim("kv_heads"), hd = s.dim("head_dim");
    const int64_t q_len = static_cast<int64_t>(s.params.at(kCrossQLen)), kv = s.dim("kv_len");
    return OpCall{{util::output(dt, {b * q_len, hq, hd}), util::uniform(dt, {b * q_len, hq, hd}, rng, "query", -1, 1),
                   util::uniform(dt, {b, kv, hk, hd}, rng, "key", -1, 1),
                   util::uniform(dt, {b, kv, hk, hd}, rng, "value", -1, 1)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"batch", c.arg(kKeyCache).size(0)},
                    {"q_heads", c.arg(kQuery).size(1)},
                    {"kv_heads", c.arg(kKeyCache).size(2)},
                    {"head_dim", c.arg(kQuery).size(2)},
                    {"kv_len", c.arg(kKeyCache).size(1)}},
                   c.params};
  };
  d.flops = [](const OpCall& c) {
    const Geometry g = cross_geometry(c);
    return 4.0 * static_cast<double>(g.b * g.q_len) * static_cast<double>(g.kv_len) * static_cast<double>(g.hq * g.d);
  };
  d.bytes = [](const OpCall& c) {
    const Geometry g = cross_geometry(c);
    const double es = static_cast<double>(dtype_size(c.arg(kQuery).dtype()));
    return es *
           (2.0 * static_cast<double>(c.arg(kQuery).numel()) + 2.0 * static_cast<double>(g.b * g.kv_len * g.hk * g.d));
  };
  reg.add(d);
  reg.add_impl({"cross_attention", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kQuery).dtype(),
                                      [&](auto tag) { attention_cpu<decltype(tag)>(c, cross_geometry(c)); });
                }});
}

}  // namespace fk::kernels
