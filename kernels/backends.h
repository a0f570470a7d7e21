// The backend factory: which backends this build has, which device a rank uses, and
// the one call that makes a job's backend. Adding a backend adds one line to
// backends.cc (and its folder under kernels/).
#pragma once

#include "kernels/backend.h"

#include <memory>
#include <string>
#include <vector>

namespace fk::kernels {

struct BackendOptions {
  size_t cpu_flush_bytes = 0;  // CpuBackendOptions::flush_bytes
};

// The rank's index among the ranks of its node: SLURM_LOCALID under srun, Open MPI's
// OMPI_COMM_WORLD_LOCAL_RANK under mpirun, MPI_LOCALRANKID (MPICH), else 0.
int node_local_rank();

// "" when a backend of `kind` can be made here, else why not ("this build has no CUDA",
// "no CUDA device is visible"). With local_rank >= 0, also whether that rank has a
// device of its own (CUDA: local_rank < visible devices).
std::string backend_unavailable(DeviceKind kind, int local_rank = -1);

// The backend kinds that can be made here (the CPU always), for tests that run once
// per backend present.
std::vector<DeviceKind> backend_kinds_present();

// The backend of `kind` for the rank with node-local index `local_rank` (CUDA: device
// local_rank; one GPU per rank). Throws fk::Error(kUnsupported) naming why not.
std::unique_ptr<Backend> backend_create(DeviceKind kind, int local_rank, const BackendOptions& options = {});

}  // namespace fk::kernels
