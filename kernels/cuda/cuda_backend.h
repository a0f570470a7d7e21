// The CUDA backend: one device per process (chosen by the caller from the node-local
// rank), a caching allocator, one non-blocking stream that every copy, fill, baseline
// op, timer mark and NCCL collective of the backend is enqueued on, CUDA events as
// timer, an L2 flush (a memset of max(4 x L2, 256 MiB)), NVML readings, and the "cuda"
// baselines of kernels/cuda/ops/.
//
// Memory: freed device blocks are kept for reuse (by rounded size); because all work
// of the backend runs on its one stream, a block reused after a free is ordered after
// every use of its previous owner. cudaMalloc failing first releases the cached blocks
// and retries; then the allocation fails with "out of memory ... on cuda:N".
#pragma once

#include "kernels/backend.h"

#include <memory>

namespace fk::cuda {

// Number of visible CUDA devices (0 without a driver or device).
int device_count();

// The backend on device `index`; throws fk::Error(kUnsupported) when no such device is
// visible, naming how many are and CUDA_VISIBLE_DEVICES.
std::unique_ptr<kernels::Backend> cuda_backend_create(int index);

}  // namespace fk::cuda
