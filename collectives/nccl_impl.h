// NcclCommunicator's private state and the polling that makes non-blocking NCCL calls
// finish or fail within the timeout. Internal to collectives/ (nccl_communicator.cc,
// nccl_ops.cc).
//
// Invariants: once aborted, comm is released (ncclCommAbort) and every later call
// throws kRuntime; stream is owned iff owns_stream; scratch is a 16-byte device buffer.
#pragma once

#include "collectives/nccl_check.h"
#include "collectives/nccl_communicator.h"

#include <functional>
#include <string_view>

namespace fk::collectives {

struct NcclCommunicator::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  bool owns_stream = false;
  void* scratch = nullptr;
  int device = 0;
  int rank = 0;
  int size = 0;
  NcclOptions options;
  bool aborted = false;

  Impl() = default;
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Creates the owned stream (when `external` is null) and the scratch buffer;
  // the device must be current.
  void attach_stream(void* external, std::string_view op);
  // Throws kRuntime if the communicator was aborted.
  void require_usable(std::string_view op) const;
  // Checks the return code of an NCCL call, then polls until it leaves ncclInProgress
  // (abort + kTimeout after options.timeout, abort + kRuntime on an async error).
  void complete(ncclResult_t r, std::string_view call, std::string_view op);
  // Polls ncclCommGetAsyncError of `c` until it is no longer ncclInProgress.
  void wait_ready(ncclComm_t c, std::string_view op);
  // Runs `body` between ncclGroupStart and ncclGroupEnd (always closing the group),
  // then completes the group.
  void group(std::string_view op, const std::function<void()>& body);
  // ncclCommAbort, once. Never throws.
  void abort() noexcept;
  // "rank 1 of 4 on cuda:1", for messages.
  std::string where() const;
};

}  // namespace fk::collectives
