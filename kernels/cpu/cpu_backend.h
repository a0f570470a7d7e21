// The CPU backend: host memory, no stream (every call has finished when it returns),
// the steady clock as timer, a flush buffer as cache flush, the "cpu" baselines of
// kernels/ops/, and MPI communicators. It is what CI and machines without a GPU run.
#pragma once

#include "kernels/backend.h"

#include <cstddef>
#include <memory>

namespace fk::kernels {

struct CpuBackendOptions {
  // The cache the timing must defeat, in bytes (facts().cache_bytes, and the size of
  // the buffer flush_cache() writes); 0: the last-level cache the OS reports (16 MiB
  // when it reports none).
  size_t flush_bytes = 0;
};

std::unique_ptr<Backend> cpu_backend_create(const CpuBackendOptions& options = {});

}  // namespace fk::kernels
