// CUDA embedding baseline: unpacks the call (out, ids int32/int64, weight;
// vocab_start, vocab_size) for the launcher in embedding.cu. vocab_size only bounds
// the generated ids; the rows held here come from weight's first dimension.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/embedding_launch.h"
#include "kernels/cuda/ops/host.h"

namespace fk::cuda {

void register_cuda_embedding(kernels::OpRegistry& reg) {
  enum { kOut, kIds, kWeight };
  reg.add_impl({"embedding", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  const DType id = c.arg(kIds).dtype();
                  return host::device_contiguous(c) && (id == DType::kI64 || id == DType::kI32) &&
                         c.arg(kWeight).dim() == 2 && host::elem_of(c.arg(kWeight).dtype()).has_value();
                },
                [](const kernels::OpCall& c) {
                  const Tensor &ids = c.arg(kIds), &w = c.arg(kWeight);
                  host::check_launch(launch::embedding(c.arg(kOut).data(), ids.data(), ids.dtype() == DType::kI64,
                                                       w.data(), host::elem(w, "embedding"), ids.numel(), w.size(1),
                                                       w.size(0), c.iparam(0), current_stream()),
                                     "embedding");
                }});
}

}  // namespace fk::cuda
