// kv_cache_write: stores the keys and values of new tokens into the contiguous KV
// cache (the role of vLLM's reshape_and_cache, without paging):
//   key/value [T, Hk, D] with T = B * q_len; row b * q_len + i goes to position
//   q_start + i of sequence b in key_cache/value_cache [B, L, Hk, D].
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cstring>

namespace fk::kernels {
namespace {

enum { kKey, kValue, kKeyCache, kValueCache };

template <typename T>
void copy_rows(const OpCall& c) {
  const int64_t b = c.arg(kKeyCache).size(0), L = c.arg(kKeyCache).size(1);
  const int64_t row = c.arg(kKey).size(1) * c.arg(kKey).size(2);
  const int64_t q_len = c.iparam(0), q_start = c.iparam(1);
  for (auto [src_i, dst_i] : {std::pair{kKey, kKeyCache}, std::pair{kValue, kValueCache}}) {
    const T* src = c.arg(src_i).template data_as<T>();
    T* dst = c.arg(dst_i).template data_as<T>();
    for (int64_t s = 0; s < b; ++s)
      std::memcpy(dst + (s * L + q_start) * row, src + s * q_len * row, static_cast<size_t>(q_len * row) * sizeof(T));
  }
}

}  // namespace

void register_kv_cache_write(OpRegistry& reg) {
  OpDef d;
  d.name = "kv_cache_write";
  d.summary = "write new keys/values into the contiguous KV cache";
  d.args = {{"key", ArgRole::kIn}, {"value", ArgRole::kIn}, {"key_cache", ArgRole::kInOut}, {"value_cache", ArgRole::kInOut}};
  d.params = {"q_len", "q_start"};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kKey, 3), util::check_tensor(c, d, kValue, 3),
                                       util::check_tensor(c, d, kKeyCache, 4), util::check_tensor(c, d, kValueCache, 4),
                                       util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    const Tensor &k = c.arg(kKey), &kc = c.arg(kKeyCache);
    if (c.arg(kValue).shape() != k.shape() || c.arg(kValueCache).shape() != kc.shape())
      return std::string("kv_cache_write: key/value (or their caches) differ in shape");
    if (k.size(1) != kc.size(2) || k.size(2) != kc.size(3)) return std::string("kv_cache_write: head layout differs");
    if (k.size(0) != kc.size(0) * c.iparam(0)) return std::string("kv_cache_write: rows must be batch x q_len");
    if (c.iparam(1) < 0 || c.iparam(1) + c.iparam(0) > kc.size(1))
      return std::string("kv_cache_write: q_start + q_len exceeds the cache length");
    return std::string();
  };
  d.reference = [](const OpCall& c) { copy_rows<double>(c); };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("batch"), hk = s.dim("kv_heads"), hd = s.dim("head_dim"), L = s.dim("cache_len");
    const int64_t q_len = static_cast<int64_t>(s.params.at(0));
    return OpCall{{util::uniform(dt, {b * q_len, hk, hd}, rng, "key", -1, 1),
                   util::uniform(dt, {b * q_len, hk, hd}, rng, "value", -1, 1),
                   util::uniform(dt, {b, L, hk, hd}, rng, "key_cache", -1, 1),
                   util::uniform(dt, {b, L, hk, hd}, rng, "value_cache", -1, 1)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"batch", c.arg(kKeyCache).size(0)},
                    {"kv_heads", c.arg(kKeyCache).size(2)},
                    {"head_dim", c.arg(kKeyCache).size(3)},
                    {"cache_len", c.arg(kKeyCache).size(1)}},
                   c.params};
  };
  d.flops = [](const OpCall&) { return 0.0; };
  d.bytes = [](const OpCall& c) { return 4.0 * static_cast<double>(c.arg(kKey).nbytes()); };
  reg.add(d);
  reg.add_impl({"kv_cache_write", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kKey).dtype(), [&](auto tag) { copy_rows<decltype(tag)>(c); });
                }});
}

}  // namespace fk::kernels
