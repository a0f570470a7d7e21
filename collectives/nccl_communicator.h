// NCCL backend of Communicator: device memory, work enqueued on one CUDA stream.
//
// Invariants:
// - No nccl.h or cuda_runtime.h here (pimpl): the unique id travels as 128 bytes and
//   the stream as void* (a cudaStream_t).
// - The NCCL communicator is non-blocking (ncclConfig_t.blocking = 0): every NCCL call
//   is followed by polling ncclCommGetAsyncError until it leaves ncclInProgress, so
//   initialisation, group launches and splits that never complete (a peer died, never
//   called) end in fk::Error(kTimeout) after timeout() instead of hanging; the
//   communicator is aborted (ncclCommAbort) and every later call throws kRuntime.
// - Operations return once enqueued on stream(); buffers may be reused only after
//   synchronize(), which polls the stream and ncclCommGetAsyncError and turns a hang
//   into kTimeout (like nccl-tests' testStreamSynchronize).
// - fp16/bf16 reduce natively in NCCL, in the element type: partial sums travel between
//   ranks as fp16/bf16, so a sum over n ranks may round up to n-1 times (unlike the MPI
//   backend's single rounding from fp32). Every dtype reduces, with sum and max.
// - Tags of send/recv/send_recv are checked (>= 0) but NCCL has none: messages between
//   a pair of ranks match in call order.
// - NCCL_NVLS_ENABLE is forced to 0 before initialisation (nccl_env.h).
// - A rank may drive one device per communicator; two ranks of one communicator on
//   the same device are not supported by NCCL.
#pragma once

#include "collectives/communicator.h"

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>

namespace fk::collectives {

// The bytes of an ncclUniqueId (NCCL_UNIQUE_ID_BYTES; checked in the .cc).
using NcclUniqueIdBytes = std::array<std::byte, 128>;

struct NcclOptions {
  // Limit for synchronize(), initialisation, group launches and finalisation.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

class NcclCommunicator final : public Communicator {
 public:
  // A fresh id (ncclGetUniqueId); one rank makes it and hands it to all others.
  static NcclUniqueIdBytes make_unique_id();

  // Joins the communicator of `size` ranks named by `id` as `rank`, on CUDA device
  // `device`. Collective over the `size` processes or threads that call it with the
  // same id. `stream` is a cudaStream_t the caller keeps alive, or nullptr for a
  // stream the communicator creates and owns. Throws kInvalidArgument for bad
  // rank/size/device, kRuntime for NCCL/CUDA failures, kTimeout if peers never join.
  NcclCommunicator(int rank, int size, const NcclUniqueIdBytes& id, int device, void* stream = nullptr,
                   NcclOptions options = {});
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int device() const;
  void* stream() const;  // the cudaStream_t work is enqueued on
  std::chrono::milliseconds timeout() const;

  int rank() const override;
  int size() const override;
  std::string backend() const override { return "nccl"; }
  bool supports(DType dtype, ReduceOp op) const override;

  void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op) override;
  void all_gather(const void* send, void* recv, size_t count, DType dtype) override;
  void reduce_scatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op) override;
  void all_to_all(const void* send, void* recv, size_t count, DType dtype) override;
  void all_to_allv(const void* send, const std::vector<size_t>& send_counts, const std::vector<size_t>& send_displs,
                   void* recv, const std::vector<size_t>& recv_counts, const std::vector<size_t>& recv_displs,
                   DType dtype) override;
  void broadcast(void* buffer, size_t count, DType dtype, int root) override;
  void send(const void* buffer, size_t count, DType dtype, int peer, int tag) override;
  void recv(void* buffer, size_t count, DType dtype, int peer, int tag) override;
  void send_recv(const void* send, size_t send_count, int dest, void* recv, size_t recv_count, int source, DType dtype,
                 int tag) override;
  // Enqueues a one-element all_reduce and synchronizes.
  void barrier() override;
  void synchronize() override;
  // ncclCommSplit; the child gets its own stream on the same device and the same options.
  std::unique_ptr<Communicator> split(int color, int key) override;

  struct Impl;

 private:
  explicit NcclCommunicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Builds an NCCL communicator over the ranks of `bootstrap`, which must be a host
// memory communicator (backend() == "mpi"): its rank 0 makes the unique id and
// broadcasts it. Collective over `bootstrap`. NCCL rank == bootstrap rank.
std::unique_ptr<NcclCommunicator> nccl_from_mpi(Communicator& bootstrap, int device, void* stream = nullptr,
                                                NcclOptions options = {});

// Number of visible CUDA devices (0 without a driver or device).
int cuda_device_count();

}  // namespace fk::collectives
