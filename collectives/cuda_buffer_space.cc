// cuda_buffer_space(): BufferSpace over one CUDA device (cudaMalloc, synchronous
// cudaMemcpy), and cuda_device_count(). Declared in nccl_communicator.h.
#include "collectives/nccl_check.h"
#include "collectives/nccl_communicator.h"

#include "core/error.h"

#include <algorithm>

namespace fk::collectives {

namespace {

// Copies run on the space's own stream and are waited for before returning: a plain
// cudaMemcpy from pageable memory may return before its DMA lands, and NCCL's
// non-blocking stream does not wait for the legacy default stream, so a collective
// could otherwise read a buffer still being written.
class CudaSpace final : public BufferSpace {
 public:
  explicit CudaSpace(int device) : device_(device) {
    CudaDeviceGuard guard(device_, "cuda buffer space");
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags",
               "cuda buffer space");
  }
  ~CudaSpace() override {
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    cudaSetDevice(device_);
    cudaStreamDestroy(stream_);
    cudaSetDevice(previous);
  }
  CudaSpace(const CudaSpace&) = delete;
  CudaSpace& operator=(const CudaSpace&) = delete;

  std::string name() const override { return fmt::format("cuda:{}", device_); }
  void* allocate(size_t bytes) override {
    CudaDeviceGuard guard(device_, "cuda buffer");
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, std::max<size_t>(bytes, 256)), "cudaMalloc", "cuda buffer");
    return p;
  }
  void release(void* ptr) noexcept override {
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    cudaSetDevice(device_);
    cudaFree(ptr);
    cudaSetDevice(previous);
  }
  void upload(void* dst, const void* host_src, size_t bytes) override {
    copy(dst, host_src, bytes, cudaMemcpyHostToDevice, "cuda upload");
  }
  void download(void* host_dst, const void* src, size_t bytes) override {
    copy(host_dst, src, bytes, cudaMemcpyDeviceToHost, "cuda download");
  }

 private:
  void copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, std::string_view op) {
    if (bytes == 0) return;
    CudaDeviceGuard guard(device_, op);
    cuda_check(cudaMemcpyAsync(dst, src, bytes, kind, stream_), "cudaMemcpyAsync", op);
    cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", op);
  }

  int device_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<BufferSpace> cuda_buffer_space(int device) {
  const int n = cuda_device_count();
  if (device < 0 || device >= n)
    fail(ErrorKind::kInvalidArgument, "cuda_buffer_space: device {} does not exist ({} visible)", device, n);
  return std::make_unique<CudaSpace>(device);
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky "no device / no driver" error
    return 0;
  }
  return n;
}

}  // namespace fk::collectives
