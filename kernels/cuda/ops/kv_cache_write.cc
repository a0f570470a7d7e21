// CUDA kv_cache_write baseline: unpacks the call (key, value [B * q_len, Hk, D];
// key_cache, value_cache [B, L, Hk, D] in place; q_len, q_start) for the launcher in
// kv_cache_write.cu.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/kv_cache_write_launch.h"

namespace fk::cuda {

void register_cuda_kv_cache_write(kernels::OpRegistry& reg) {
  enum { kKey, kValue, kKeyCache, kValueCache };
  reg.add_impl({"kv_cache_write", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && host::elem_of(c.arg(kKey).dtype()).has_value() &&
                         c.arg(kKey).dim() == 3 && c.arg(kKeyCache).dim() == 4;
                },
                [](const kernels::OpCall& c) {
                  const Tensor &k = c.arg(kKey), &kc = c.arg(kKeyCache);
                  host::check_launch(launch::kv_cache_write(k.data(), c.arg(kValue).data(), kc.data(),
                                                            c.arg(kValueCache).data(), host::elem(k, "kv_cache_write"),
                                                            kc.size(0), kc.size(1), c.iparam(0), c.iparam(1),
                                                            k.size(1) * k.size(2), current_stream()),
                                     "kv_cache_write");
                }});
}

}  // namespace fk::cuda
