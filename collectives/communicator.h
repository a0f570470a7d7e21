// Communicator: the collective and point-to-point operations a runner group uses,
// behind one interface with an MPI backend (host memory; CPU machines and CI) and an
// NCCL backend (device memory). Model and kernel code call only this interface.
//
// Contract, every backend:
// - Buffers are `count` elements of `dtype` in the memory the backend works on (host
//   for MPI, device for NCCL). Data movement (all_gather, all_to_all(v), broadcast,
//   send/recv, send_recv) takes every dtype; reductions (all_reduce, reduce_scatter)
//   take the (dtype, op) pairs supports() accepts and throw kUnsupported otherwise.
// - fp16/bf16 reductions: the MPI backend accumulates in fp32 and rounds once to the
//   element type, so a sum over ranks loses no more than one rounding. NCCL reduces in
//   the element type (partial sums travel between ranks as fp16/bf16), so a sum over n
//   ranks may round up to n-1 times. docs/collectives.md has the details; results are
//   identical across backends whenever every partial sum is representable (small
//   integers, as the tests and the bandwidth probe use).
// - send == recv means in place where the operation allows it (all_reduce only).
// - count == 0 is legal everywhere and completes without hanging (collectives still
//   need every rank to call them).
// - Calls are collective over the communicator's ranks unless marked point-to-point;
//   every rank must call them in the same order. No call returns before its own
//   buffers may be reused (MPI: blocking; NCCL: enqueued on the communicator's stream,
//   which synchronize() drains).
// - Bad arguments (a peer or root outside [0, size()), a negative tag, per-rank vectors
//   of the wrong length) throw fk::Error(kInvalidArgument); failures of the transport
//   throw fk::Error(kRuntime) naming the operation and the backend's error; a hang
//   detected by synchronize() throws fk::Error(kTimeout).
#pragma once

#include "core/dtype.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fk::collectives {

enum class ReduceOp { kSum, kMax };

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backend() const = 0;  // "mpi", "nccl"

  // Capability query: can all_reduce/reduce_scatter reduce `dtype` with `op`?
  // (Data movement takes every dtype and needs no query.)
  virtual bool supports(DType dtype, ReduceOp op) const = 0;

  virtual void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op) = 0;
  // recv holds size() * count elements, rank r's contribution at r * count.
  virtual void all_gather(const void* send, void* recv, size_t count, DType dtype) = 0;
  // send holds size() * count elements; rank r receives the reduction of block r.
  virtual void reduce_scatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op) = 0;
  // Block r of send (count elements) goes to rank r; recv block r comes from rank r.
  virtual void all_to_all(const void* send, void* recv, size_t count, DType dtype) = 0;
  // Variable blocks: counts and displacements in elements, one per rank.
  virtual void all_to_allv(const void* send, const std::vector<size_t>& send_counts,
                           const std::vector<size_t>& send_displs, void* recv, const std::vector<size_t>& recv_counts,
                           const std::vector<size_t>& recv_displs, DType dtype) = 0;
  virtual void broadcast(void* buffer, size_t count, DType dtype, int root) = 0;
  // Point-to-point (matched by peer and tag; tag >= 0). The receiver's count must
  // equal the sender's.
  virtual void send(const void* buffer, size_t count, DType dtype, int peer, int tag) = 0;
  virtual void recv(void* buffer, size_t count, DType dtype, int peer, int tag) = 0;
  // Point-to-point, both directions at once: sends `send` to `dest` and receives
  // `recv` from `source` without the deadlock two blocking calls risk in rings and
  // pipeline-stage exchanges (dest == source == rank() is a local copy). Each side's
  // count must equal its partner's. Added to the original interface for the
  // bandwidth probe's sendrecv and for pipeline stages trading activations.
  virtual void send_recv(const void* send, size_t send_count, int dest, void* recv, size_t recv_count, int source,
                         DType dtype, int tag) = 0;
  virtual void barrier() = 0;
  // Waits for all enqueued work (no-op for blocking backends).
  virtual void synchronize() = 0;

  // Collective: ranks with the same color form a new communicator, ordered by key
  // (then by rank). color < 0 gives nullptr on that rank.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;
};

// "sum", "max".
std::string_view reduce_op_name(ReduceOp op);

}  // namespace fk::collectives
