#include "kernels/cuda/ops/host.h"

#include "core/error.h"

namespace fk::cuda {
namespace {
thread_local cudaStream_t t_stream = nullptr;
}  // namespace

cudaStream_t current_stream() { return t_stream; }
void set_current_stream(cudaStream_t stream) { t_stream = stream; }

namespace host {

std::optional<launch::Elem> elem_of(DType dtype) {
  switch (dtype) {
    case DType::kF32: return launch::Elem::kF32;
    case DType::kF16: return launch::Elem::kF16;
    case DType::kBF16: return launch::Elem::kBF16;
    default: return std::nullopt;
  }
}

bool device_contiguous(const kernels::OpCall& call) {
  for (const Tensor& t : call.args)
    if (t.defined() && (t.device().kind != DeviceKind::kCuda || !t.is_contiguous())) return false;
  return true;
}

void check_launch(cudaError_t status, const char* op) {
  if (status != cudaSuccess)
    fail(ErrorKind::kRuntime, "{}: CUDA launch failed: {} ({})", op, cudaGetErrorName(status),
         cudaGetErrorString(status));
}

launch::Elem elem(const Tensor& t, const char* op) {
  const auto e = elem_of(t.dtype());
  if (!e) fail(ErrorKind::kUnsupported, "{}: dtype {} has no CUDA baseline", op, dtype_name(t.dtype()));
  return *e;
}

}  // namespace host
}  // namespace fk::cuda
