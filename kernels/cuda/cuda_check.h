// FK_CUDA_CHECK(call): turns a failing CUDA runtime call into fk::Error naming the
// call, the CUDA error and the location. Sticky errors (a kernel fault) make every
// later call fail too; the runner maps kRuntime from here to its CUDA exit code.
#pragma once

#include "core/error.h"

#include <cuda_runtime.h>

#define FK_CUDA_CHECK(call)                                                                 \
  do {                                                                                      \
    const cudaError_t fk_cuda_status_ = (call);                                             \
    if (fk_cuda_status_ != cudaSuccess)                                                     \
      ::fk::fail(::fk::ErrorKind::kRuntime, "CUDA call {} failed: {} ({})", #call,          \
                 cudaGetErrorName(fk_cuda_status_), cudaGetErrorString(fk_cuda_status_));   \
  } while (0)
