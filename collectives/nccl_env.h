// NCCL environment policy, applied before any NCCL communicator is created.
//
// NVLink multicast (NVLS) stays off: a program using it can put a host's shared GPUs
// out of service, so NCCL_NVLS_ENABLE is forced to "0" whatever it was (unset, "1",
// anything else). Nothing here ever enables it. No NCCL or CUDA headers: testable on
// machines without a GPU.
#pragma once

namespace fk::collectives {

// Sets NCCL_NVLS_ENABLE=0 in this process's environment unless it already reads
// exactly "0". Idempotent; NCCL reads the variable when a communicator is first
// initialised, so call it before ncclCommInitRank (NcclCommunicator does).
// Not thread-safe against concurrent getenv/setenv elsewhere (POSIX setenv).
void nccl_apply_env_policy();

}  // namespace fk::collectives
