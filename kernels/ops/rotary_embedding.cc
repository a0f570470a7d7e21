// rotary_embedding (vLLM: rotary_embedding(positions, query, key, head_size,
// cos_sin_cache, is_neox)): rotates the first rot_dim dimensions of every head of
// query [T, Hq * head_size] and key [T, Hk * head_size] in place by the angles of
// row positions[t] of cos_sin_cache [max_positions, rot_dim] (cos in the first half,
// sin in the second). neox style rotates the two halves (x1, x2) of the rotary part;
// gpt-j style rotates interleaved pairs (x[2i], x[2i+1]). Scaling (linear, llama3)
// lives in how the model builds the cache (runner/model/transformer/rope_cache.cc).
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

namespace fk::kernels {
namespace {

enum { kPositions, kQuery, kKey, kCache };

template <typename F, typename Load, typename Store>
void rotate_head(int64_t rot, bool neox, const F* cs, Load load, Store store) {
  const int64_t half = rot / 2;
  for (int64_t i = 0; i < half; ++i) {
    const F cos = cs[i], sin = cs[half + i];
    const int64_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
    const F x1 = load(a), x2 = load(b);
    store(a, x1 * cos - x2 * sin);
    store(b, x2 * cos + x1 * sin);
  }
}

template <typename T>
void rope_cpu(const OpCall& c) {
  const Tensor& pos = c.arg(kPositions);
  const int64_t t = pos.numel(), hs = c.iparam(0), rot = c.arg(kCache).size(1);
  const bool neox = c.iparam(1) != 0;
  const T* cache = c.arg(kCache).data_as<T>();
  for (int which : {kQuery, kKey}) {
    T* x = c.arg(which).data_as<T>();
    const int64_t heads = c.arg(which).size(1) / hs;
#pragma omp parallel for schedule(static) if (t * heads * rot > 65536)
    for (int64_t i = 0; i < t; ++i) {
      const T* row = cache + cpu::load_index(pos.data(), pos.dtype(), i) * rot;
      float cs[1024];
      for (int64_t j = 0; j < rot; ++j) cs[j] = cpu::load(row[j]);
      for (int64_t h = 0; h < heads; ++h) {
        T* head = x + (i * heads + h) * hs;
        rotate_head<float>(rot, neox, cs, [&](int64_t k) { return cpu::load(head[k]); },
                           [&](int64_t k, float v) { head[k] = cpu::store<T>(v); });
      }
    }
  }
}

}  // namespace

void register_rotary_embedding(OpRegistry& reg) {
  OpDef d;
  d.name = "rotary_embedding";
  d.summary = "in-place rotary position embedding of query and key (neox or gpt-j style)";
  d.args = {{"positions", ArgRole::kIn, false},
            {"query", ArgRole::kInOut},
            {"key", ArgRole::kInOut},
            {"cos_sin_cache", ArgRole::kIn}};
  d.params = {"head_size", "is_neox"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kPositions, 1, {DType::kI64, DType::kI32}),
                                       util::check_tensor(c, d, kQuery, 2), util::check_tensor(c, d, kKey, 2),
                                       util::check_tensor(c, d, kCache, 2), util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    const int64_t hs = c.iparam(0), rot = c.arg(kCache).size(1);
    if (hs <= 0 || c.arg(kQuery).size(1) % hs != 0 || c.arg(kKey).size(1) % hs != 0)
      return std::string("rotary_embedding: query/key widths must be multiples of head_size");
    if (rot % 2 != 0 || rot > hs || rot > 1024)
      return std::string("rotary_embedding: cos_sin_cache width (rot_dim) must be even and <= head_size");
    return util::first_error({util::check_dim(c, d, kQuery, 0, c.arg(kPositions).size(0), "tokens"),
                              util::check_dim(c, d, kKey, 0, c.arg(kPositions).size(0), "tokens")});
  };
  d.reference = [](const OpCall& c) {
    const Tensor& pos = c.arg(kPositions);
    const int64_t hs = c.iparam(0), rot = c.arg(kCache).size(1);
    const double* cache = util::f64(c.arg(kCache));
    for (int which : {kQuery, kKey}) {
      double* x = util::f64(c.arg(which));
      const int64_t heads = c.arg(which).size(1) / hs;
      for (int64_t i = 0; i < pos.numel(); ++i)
        for (int64_t h = 0; h < heads; ++h) {
          double* head = x + (i * heads + h) * hs;
          rotate_head<double>(rot, c.iparam(1) != 0, cache + cpu::load_index(pos.data(), pos.dtype(), i) * rot,
                              [&](int64_t k) { return head[k]; }, [&](int64_t k, double v) { head[k] = v; });
        }
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), hs = static_cast<int64_t>(s.params.at(0));
    const int64_t maxpos = s.dim("max_positions"), rot = s.dim("rot_dim");
    return OpCall{{util::uniform_ints({t}, rng, "positions", 0, maxpos),
                   util::uniform(dt, {t, s.dim("q_heads") * hs}, rng, "query", -2, 2),
                   util::uniform(dt, {t, s.dim("kv_heads") * hs}, rng, "key", -2, 2),
                   util::uniform(dt, {maxpos, rot}, rng, "cos_sin_cache", -1, 1)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const int64_t hs = c.iparam(0);
    return OpShape{{{"tokens", c.arg(kPositions).numel()},
                    {"q_heads", c.arg(kQuery).size(1) / hs},
                    {"kv_heads", c.arg(kKey).size(1) / hs},
                    {"max_positions", c.arg(kCache).size(0)},
                    {"rot_dim", c.arg(kCache).size(1)}},
                   c.params};
  };
  d.flops = [](const OpCall& c) {
    return 3.0 * static_cast<double>(c.arg(kQuery).numel() + c.arg(kKey).numel()) *
           static_cast<double>(c.arg(kCache).size(1)) / static_cast<double>(c.iparam(0));
  };
  d.bytes = [](const OpCall& c) {
    return 2.0 * static_cast<double>(c.arg(kQuery).nbytes() + c.arg(kKey).nbytes()) +
           static_cast<double>(c.arg(kPositions).nbytes()) +
           static_cast<double>(c.arg(kPositions).numel() * c.arg(kCache).size(1)) *
               static_cast<double>(dtype_size(c.arg(kCache).dtype()));
  };
  reg.add(d);
  reg.add_impl({"rotary_embedding", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kQuery).dtype(), [&](auto tag) { rope_cpu<decltype(tag)>(c); });
                }});
}

}  // namespace fk::kernels
