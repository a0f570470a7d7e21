// The k == 0 path of the CUDA linear baseline: an empty dot product, so every row of
// the output is the bias (zeros without one). Grid-stride over rows * n elements.
#include "kernels/cuda/ops/elem.cuh"
#include "kernels/cuda/ops/linear_launch.h"

namespace fk::cuda {
namespace {

template <typename T>
__global__ void linear_fill_bias_kernel(T* __restrict__ out, const T* __restrict__ bias, int64_t total, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = bias ? bias[i % n] : dev::from_f32<T>(0.f);
}

template <typename T>
struct LinearFill {
  static cudaError_t run(void* out, const void* bias, int64_t rows, int64_t n, cudaStream_t stream) {
    const int64_t total = rows * n;
    if (total <= 0) return cudaSuccess;
    const int64_t blocks = (total + 255) / 256;
    linear_fill_bias_kernel<T><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
        static_cast<T*>(out), static_cast<const T*>(bias), total, n);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::linear_fill_bias(void* out, const void* bias, Elem elem, int64_t rows, int64_t n,
                                     cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, LinearFill, out, bias, rows, n, stream);
}

}  // namespace fk::cuda
