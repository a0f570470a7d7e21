// Host side of the CUDA backend: the device allocator, copies, and Tensor-level
// wrappers around the launchers in launch.h.
#include "kernels/cuda/cuda_backend.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch.h"

#include <fmt/format.h>

namespace fk::cuda {
namespace {

class CudaAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, Device device) override {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return nullptr;
    if (cudaSetDevice(device.index) != cudaSuccess) return nullptr;
    void* p = nullptr;
    const cudaError_t rc = cudaMalloc(&p, bytes == 0 ? 256 : bytes);
    cudaSetDevice(previous);
    return rc == cudaSuccess ? p : nullptr;
  }
  void deallocate(void* ptr, size_t, Device) override { cudaFree(ptr); }
};

CudaAllocator g_allocator;

launch::Elem elem_of(DType d, const char* op) {
  switch (d) {
    case DType::kF32: return launch::Elem::kF32;
    case DType::kF16: return launch::Elem::kF16;
    case DType::kBF16: return launch::Elem::kBF16;
    default: fail(ErrorKind::kUnsupported, "{}: dtype {} on CUDA", op, dtype_name(d));
  }
}

}  // namespace

void backend_init() { allocator_register(DeviceKind::kCuda, &g_allocator); }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky error
    return 0;
  }
  return n;
}

std::string device_describe(int index) {
  cudaDeviceProp prop{};
  FK_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return fmt::format("{} (sm_{}{}, {:.1f} GiB)", prop.name, prop.major, prop.minor,
                     static_cast<double>(prop.totalGlobalMem) / (1u << 30));
}

void copy_to_device(const Tensor& host, const Tensor& device) {
  if (host.nbytes() != device.nbytes() || !host.is_contiguous() || !device.is_contiguous())
    fail(ErrorKind::kInvalidArgument, "copy_to_device: {} -> {} mismatch", host.describe(), device.describe());
  FK_CUDA_CHECK(cudaMemcpy(device.data(), host.data(), host.nbytes(), cudaMemcpyHostToDevice));
}

void copy_to_host(const Tensor& device, const Tensor& host) {
  if (host.nbytes() != device.nbytes() || !host.is_contiguous() || !device.is_contiguous())
    fail(ErrorKind::kInvalidArgument, "copy_to_host: {} -> {} mismatch", device.describe(), host.describe());
  FK_CUDA_CHECK(cudaMemcpy(host.data(), device.data(), host.nbytes(), cudaMemcpyDeviceToHost));
}

void rms_norm(const Tensor& out, const Tensor& x, const Tensor& weight, double eps) {
  if (x.dtype() != out.dtype() || x.dtype() != weight.dtype() || x.shape() != out.shape() || x.dim() < 1 ||
      weight.numel() != x.size(-1) || !x.is_contiguous() || !out.is_contiguous() ||
      x.device().kind != DeviceKind::kCuda || out.device() != x.device() || weight.device() != x.device())
    fail(ErrorKind::kInvalidArgument, "rms_norm: bad arguments out={} x={} weight={}", out.describe(),
         x.describe(), weight.describe());
  const int64_t hidden = x.size(-1);
  FK_CUDA_CHECK(launch::rms_norm(out.data(), x.data(), weight.data(), elem_of(x.dtype(), "rms_norm"),
                                 x.numel() / hidden, hidden, static_cast<float>(eps), nullptr));
}

}  // namespace fk::cuda
