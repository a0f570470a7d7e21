// MPI backend of Communicator: host memory, blocking calls, used on CPU machines and
// in CI (and to bootstrap NCCL: the unique id travels over it).
//
// Invariants:
// - Each MpiCommunicator owns one MPI communicator (a duplicate of the one it wraps,
//   or the result of a split) with MPI_ERRORS_RETURN, so MPI failures become
//   fk::Error(kRuntime) naming the operation and MPI_Error_string instead of aborting
//   the job; the caller's communicators keep their own error handlers and traffic.
// - fp32/fp64/int32/int64 reduce natively; fp16/bf16 are widened to fp32, reduced by
//   MPI in fp32, and rounded once back to the element type (uint8 does not reduce).
// - synchronize() is a no-op: every call returns when its buffers may be reused.
// - The destructor frees the MPI communicator unless MPI is already finalized; MPI
//   must outlive every MpiCommunicator that is still used.
#pragma once

#include "collectives/communicator.h"

#include <mpi.h>

#include <memory>

namespace fk::collectives {

class MpiCommunicator final : public Communicator {
 public:
  // Duplicates `comm` (collective over it) and owns the duplicate.
  // Requires MPI initialised; throws fk::Error(kRuntime) otherwise.
  static std::unique_ptr<MpiCommunicator> duplicate(MPI_Comm comm);
  // Takes ownership of `comm` (freed by the destructor); comm must not be MPI_COMM_NULL,
  // MPI_COMM_WORLD or MPI_COMM_SELF.
  static std::unique_ptr<MpiCommunicator> adopt(MPI_Comm comm);

  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  // The owned MPI communicator (valid for this object's lifetime).
  MPI_Comm handle() const { return comm_; }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }
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
  void barrier() override;
  void synchronize() override {}
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  explicit MpiCommunicator(MPI_Comm owned);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
};

// A communicator over all processes (a duplicate of MPI_COMM_WORLD). Collective over
// MPI_COMM_WORLD. Requires MPI initialised by the caller (MPI_Init before, MPI_Finalize
// after the communicator is destroyed); throws fk::Error(kRuntime) otherwise.
std::unique_ptr<Communicator> mpi_world();

// A communicator over the processes of `comm` (e.g. a job group the runner split from
// MPI_COMM_WORLD); duplicates it, so collective over `comm`. The caller keeps `comm`.
std::unique_ptr<Communicator> mpi_wrap(MPI_Comm comm);

}  // namespace fk::collectives
