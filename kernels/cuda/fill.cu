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

// core/rng.cc's Philox4x32-10, word 0 of element `index` on lane 0.
__device__ __forceinline__ uint32_t philox_word0(uint64_t index, uint64_t key) {
  uint32_t c0 = static_cast<uint32_t>(index), c1 = static_cast<uint32_t>(index >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const uint32_t lo0 = 0xD2511F53u * c0, hi0 = __umulhi(0xD2511F53u, c0);
    const uint32_t lo1 = 0xCD9E8D57u * c2, hi1 = __umulhi(0xCD9E8D57u, c2);
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c0;
}

template <typename T>
__global__ void uniform_kernel(T* __restrict__ data, uint64_t key, int64_t cols, int64_t row0, int64_t col0,
                               int64_t ncols, int64_t count, float lo, float hi, float add) {
  const float span = __fsub_rn(hi, lo);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / ncols, c = i - r * ncols;
    const uint64_t index = static_cast<uint64_t>((row0 + r) * cols + col0 + c);
    const float u = static_cast<float>(philox_word0(index, key) >> 8) * 0x1.0p-24f;
    float v = __fadd_rn(lo, __fmul_rn(span, u));
    if (add != 0.0f) v = __fadd_rn(v, add);
    data[i] = dev::from_f32<T>(v);
  }
}

template <typename T>
struct Uniform {
  static cudaError_t run(void* data, uint64_t key, int64_t cols, int64_t row0, int64_t rows, int64_t col0,
                         int64_t ncols, float lo, float hi, float add, cudaStream_t stream) {
    const int64_t count = rows * ncols;
    if (count == 0) return cudaSuccess;
    const int64_t blocks = (count + 255) / 256;
    uniform_kernel<T><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
        static_cast<T*>(data), key, cols, row0, col0, ncols, count, lo, hi, add);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch::fill_uniform(void* data, Elem elem, uint64_t key, int64_t cols, int64_t row0, int64_t rows,
                                 int64_t col0, int64_t ncols, float lo, float hi, float add, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Uniform, data, key, cols, row0, rows, col0, ncols, lo, hi, add, stream);
}

cudaError_t launch::fill(void* data, Elem elem, int64_t count, float value, cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, Fill, data, count, value, stream);
}

}  // namespace fk::cuda
