// Asynchronous 16-byte copies from global to shared memory (cp.async, sm_80+), shared
// by the attention kernels (nvcc, C++17). A copy is issued by one thread and lands
// in groups: cp_async_commit() closes the group of the copies issued since the last
// commit, cp_async_wait<N>() returns once at most N of this thread's groups are still
// in flight. Only the issuing thread may read what it copied without a barrier.
//
// Each helper is an asm statement with a memory clobber, so the compiler neither
// moves shared-memory loads across a copy nor caches them across a wait. Below sm_80
// the copy is a plain load and store, and commit and wait do nothing.
#pragma once

#include <cstdint>

namespace fk::cuda::dev {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from src to dst (shared); zeros when !valid (src is then not read).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
#else
  *static_cast<uint4*>(dst) = valid ? *static_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace fk::cuda::dev
