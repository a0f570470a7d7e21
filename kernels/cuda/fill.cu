// Device fill of the CUDA backend: a grid-stride loop writing one rounded value.
#include "kernels/cuda/fill_launch.h"
#include "kernels/cuda/ops/elem.cuh"

namespace fk::cuda {
namespace {

template <typename T>
__global__ void fill_kernel(T* __restrict__ data, int64_t count, float value) {
  const T v = dev::from_f32<T>(value);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    data[i] = v;
}

template <typename T>
struct Fill {
  static cudaError_t run(void* data, int64_t count, float value, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    const int64_t blocks = (count + 255) / 256;
    fill_kernel<T><<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(static_cast<T*>(data),
                                                                                           count, value);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::fill(void* data, Elem elem, int64_t count, float value, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Fill, data, count, value, stream);
}

}  // namespace fk::cuda
