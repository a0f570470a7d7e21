// Two CUDA events for timing enqueued work between them (record start, enqueue, record
// stop, synchronise on stop), destroyed with the pair. Used by the libraries' one-time
// autotuning (cuBLASLt, cuDNN); the measurement driver has its own timers.
#pragma once

#include "kernels/cuda/cuda_check.h"

#include <cuda_runtime.h>

namespace fk::cuda {

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    FK_CUDA_CHECK(cudaEventCreate(&start));
    if (const cudaError_t e = cudaEventCreate(&stop); e != cudaSuccess) {
      cudaEventDestroy(start);
      FK_CUDA_CHECK(e);
    }
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  // Milliseconds from start to stop, after waiting for stop.
  float elapsed_ms() const {
    FK_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    FK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

}  // namespace fk::cuda
