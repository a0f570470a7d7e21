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
  // the buffer flush_cache() writes, allocated on the first flush); 0: 16 MiB, as
  // fk-runner's --flush-bytes. Not the OS's last-level cache size: in a VM that is the
  // whole host socket's (500 MiB on the development machine), not one rank's share.
  size_t flush_bytes = 0;
};

std::unique_ptr<Backend> cpu_backend_create(const CpuBackendOptions& options = {});

}  // namespace fk::kernels
