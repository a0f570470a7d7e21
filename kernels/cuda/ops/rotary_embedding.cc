// CUDA rotary_embedding baseline: unpacks the call (positions int32/int64, query and
// key in place, cos_sin_cache; head_size, is_neox) for the launcher in
// rotary_embedding.cu. Heads per row are each tensor's width / head_size.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/rotary_embedding_launch.h"

namespace fk::cuda {

void register_cuda_rotary_embedding(kernels::OpRegistry& reg) {
  enum { kPositions, kQuery, kKey, kCache };
  reg.add_impl({"rotary_embedding", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  const DType p = c.arg(kPositions).dtype();
                  const int64_t hs = c.iparam(0), rot = c.arg(kCache).dim() == 2 ? c.arg(kCache).size(1) : -1;
                  return host::device_contiguous(c) && (p == DType::kI64 || p == DType::kI32) &&
                         host::elem_of(c.arg(kQuery).dtype()).has_value() && c.arg(kQuery).dim() == 2 &&
                         c.arg(kKey).dim() == 2 && hs > 0 && rot >= 0 && rot % 2 == 0 && rot <= hs && rot <= 1024;
                },
                [](const kernels::OpCall& c) {
                  const Tensor &q = c.arg(kQuery), &k = c.arg(kKey), &cache = c.arg(kCache);
                  const int64_t hs = c.iparam(0);
                  host::check_launch(
                      launch::rotary_embedding(c.arg(kPositions).data(), c.arg(kPositions).dtype() == DType::kI64,
                                               q.data(), k.data(), cache.data(), host::elem(q, "rotary_embedding"),
                                               c.arg(kPositions).numel(), q.size(1) / hs, k.size(1) / hs, hs,
                                               cache.size(1), cache.size(0), c.iparam(1) != 0, current_stream()),
                      "rotary_embedding");
                }});
}

}  // namespace fk::cuda
