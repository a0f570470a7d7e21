// Stream-ordered scratch (scratch.h), in the kernels library (nvcc C++17) so that both
// the launchers (.cu) and the host sides (.cc) can use it.
#include "kernels/cuda/ops/scratch.h"

#include <mutex>
#include <vector>

namespace fk::cuda {
namespace {

// Sets the device's default pool to keep kScratchKeepBytes, once per device.
cudaError_t keep_pool(int device) {
  static std::mutex mu;
  static std::vector<bool> done;
  std::lock_guard<std::mutex> lock(mu);
  const auto d = static_cast<size_t>(device);
  if (d >= done.size()) done.resize(d + 1, false);
  if (done[d]) return cudaSuccess;
  cudaMemPool_t pool = nullptr;
  if (const cudaError_t e = cudaDeviceGetDefaultMemPool(&pool, device); e != cudaSuccess) return e;
  uint64_t keep = kScratchKeepBytes;
  if (const cudaError_t e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep); e != cudaSuccess)
    return e;
  done[d] = true;
  return cudaSuccess;
}

}  // namespace

cudaError_t scratch_alloc(void** ptr, size_t bytes, cudaStream_t stream) {
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (const cudaError_t e = keep_pool(device); e != cudaSuccess) return e;
  return cudaMallocAsync(ptr, bytes, stream);
}

cudaError_t scratch_free(void* ptr, cudaStream_t stream) { return cudaFreeAsync(ptr, stream); }

}  // namespace fk::cuda
