// Stream-ordered scratch of the CUDA baselines (nvcc C++17 and C++20): memory that lives
// exactly as long as the enqueued work that uses it. scratch_alloc is cudaMallocAsync on
// the stream, scratch_free is cudaFreeAsync; neither synchronises, and both can be
// captured in a CUDA graph.
//
// Both draw on the device's default memory pool, which by default gives what it holds
// back to the driver at every synchronisation, so that the next call maps it again (a
// driver call per allocation, paid inside the timed window of a call that starts on an
// idle device). The first scratch_alloc on a device sets the pool's release threshold
// to kScratchKeepBytes: the pool keeps up to that much between calls.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace fk::cuda {

inline constexpr uint64_t kScratchKeepBytes = uint64_t{1} << 30;

cudaError_t scratch_alloc(void** ptr, size_t bytes, cudaStream_t stream);
cudaError_t scratch_free(void* ptr, cudaStream_t stream);

}  // namespace fk::cuda
