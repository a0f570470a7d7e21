#include "kernels/backends.h"

#include "core/error.h"
#include "kernels/cpu/cpu_backend.h"

#if FK_HAVE_CUDA
#include "kernels/cuda/cuda_backend.h"
#endif

#include <cstdlib>
#include <fmt/format.h>
#include <string>

namespace fk::kernels {

int node_local_rank() {
  for (const char* name : {"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    if (end != nullptr && *end == '\0' && r >= 0) return static_cast<int>(r);
  }
  return 0;
}

std::string backend_unavailable(DeviceKind kind, int local_rank) {
  switch (kind) {
    case DeviceKind::kCpu: return "";
    case DeviceKind::kCuda: {
#if FK_HAVE_CUDA
      const int n = cuda::device_count();
      if (n == 0) return "no CUDA device is visible on this machine";
      if (local_rank >= n)
        return fmt::format("it is rank {} on its node but only {} CUDA device{} visible; start at most one rank per GPU",
                           local_rank, n, n == 1 ? " is" : "s are");
      return "";
#else
      (void)local_rank;
      return "this build of FastKernels has no CUDA (nvcc was not found when it was configured)";
#endif
    }
  }
  return "unknown backend";
}

std::vector<DeviceKind> backend_kinds_present() {
  std::vector<DeviceKind> kinds;
  for (const auto& [name, kind] : device_kind_choices())
    if (backend_unavailable(kind).empty()) kinds.push_back(kind);
  return kinds;
}

std::unique_ptr<Backend> backend_create(DeviceKind kind, int local_rank, const BackendOptions& options) {
  if (const std::string why = backend_unavailable(kind); !why.empty())
    fail(ErrorKind::kUnsupported, "backend {}: {}", device_kind_name(kind), why);
  switch (kind) {
    case DeviceKind::kCpu: return cpu_backend_create({options.cpu_flush_bytes});
#if FK_HAVE_CUDA
    case DeviceKind::kCuda: return cuda::cuda_backend_create(local_rank);
#else
    case DeviceKind::kCuda: break;
#endif
  }
  (void)local_rank;
  fail(ErrorKind::kUnsupported, "backend {}: not built", device_kind_name(kind));
}

}  // namespace fk::kernels
