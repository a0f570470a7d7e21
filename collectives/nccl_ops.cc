// NcclCommunicator operations: argument checks shared with the MPI backend, then one
// NCCL call (or a group of ncclSend/ncclRecv) enqueued on the communicator's stream.
// Zero-count calls return without touching NCCL (every rank sees the same counts).
#include "collectives/nccl_impl.h"
#include "collectives/validate.h"
#include "core/error.h"

namespace fk::collectives {

namespace {

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::kSum ? ncclSum : ncclMax; }

const char* at(const void* base, size_t elements, DType dtype) {
  return static_cast<const char*>(base) + elements * dtype_size(dtype);
}
char* at(void* base, size_t elements, DType dtype) { return static_cast<char*>(base) + elements * dtype_size(dtype); }

}  // namespace

void NcclCommunicator::all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  Impl& s = *impl_;
  s.require_usable("all_reduce");
  if (count == 0) return;
  CudaDeviceGuard guard(s.device, "all_reduce");
  s.complete(ncclAllReduce(send, recv, count, nccl_type(dtype), nccl_op(op), s.comm, s.stream), "ncclAllReduce",
             "all_reduce");
}

void NcclCommunicator::all_gather(const void* send, void* recv, size_t count, DType dtype) {
  Impl& s = *impl_;
  s.require_usable("all_gather");
  validate_not_aliased(send, recv, count, "all_gather");
  if (count == 0) return;
  CudaDeviceGuard guard(s.device, "all_gather");
  s.complete(ncclAllGather(send, recv, count, nccl_type(dtype), s.comm, s.stream), "ncclAllGather", "all_gather");
}

void NcclCommunicator::reduce_scatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  Impl& s = *impl_;
  s.require_usable("reduce_scatter");
  validate_not_aliased(send, recv, count, "reduce_scatter");
  if (count == 0) return;
  CudaDeviceGuard guard(s.device, "reduce_scatter");
  s.complete(ncclReduceScatter(send, recv, count, nccl_type(dtype), nccl_op(op), s.comm, s.stream), "ncclReduceScatter",
             "reduce_scatter");
}

void NcclCommunicator::all_to_all(const void* send, void* recv, size_t count, DType dtype) {
  Impl& s = *impl_;
  s.require_usable("all_to_all");
  validate_not_aliased(send, recv, count, "all_to_all");
  if (count == 0) return;
  CudaDeviceGuard guard(s.device, "all_to_all");
  const ncclDataType_t type = nccl_type(dtype);
  s.group("all_to_all", [&] {
    for (int r = 0; r < s.size; ++r) {
      const size_t offset = static_cast<size_t>(r) * count;
      nccl_check(ncclSend(at(send, offset, dtype), count, type, r, s.comm, s.stream), "ncclSend", "all_to_all", s.comm);
      nccl_check(ncclRecv(at(recv, offset, dtype), count, type, r, s.comm, s.stream), "ncclRecv", "all_to_all", s.comm);
    }
  });
}

void NcclCommunicator::all_to_allv(const void* send, const std::vector<size_t>& send_counts,
                                   const std::vector<size_t>& send_displs, void* recv,
                                   const std::vector<size_t>& recv_counts, const std::vector<size_t>& recv_displs,
                                   DType dtype) {
  Impl& s = *impl_;
  s.require_usable("all_to_allv");
  validate_per_rank(send_counts, send_displs, s.size, "all_to_allv", "send");
  validate_per_rank(recv_counts, recv_displs, s.size, "all_to_allv", "recv");
  CudaDeviceGuard guard(s.device, "all_to_allv");
  const ncclDataType_t type = nccl_type(dtype);
  s.group("all_to_allv", [&] {
    for (int r = 0; r < s.size; ++r) {
      const auto i = static_cast<size_t>(r);
      if (send_counts[i] > 0)
        nccl_check(ncclSend(at(send, send_displs[i], dtype), send_counts[i], type, r, s.comm, s.stream), "ncclSend",
                   "all_to_allv", s.comm);
      if (recv_counts[i] > 0)
        nccl_check(ncclRecv(at(recv, recv_displs[i], dtype), recv_counts[i], type, r, s.comm, s.stream), "ncclRecv",
                   "all_to_allv", s.comm);
    }
  });
}

void NcclCommunicator::broadcast(void* buffer, size_t count, DType dtype, int root) {
  Impl& s = *impl_;
  s.require_usable("broadcast");
  validate_rank(root, s.size, "broadcast", "root");
  if (count == 0) return;
  CudaDeviceGuard guard(s.device, "broadcast");
  s.complete(ncclBroadcast(buffer, buffer, count, nccl_type(dtype), root, s.comm, s.stream), "ncclBroadcast",
             "broadcast");
}

void NcclCommunicator::send(const void* buffer, size_t count, DType dtype, int peer, int tag) {
  Impl& s = *impl_;
  s.require_usable("send");
  validate_rank(peer, s.size, "send", "peer");
  validate_tag(tag, "send");
  if (count == 0) return;
  CudaDeviceGuard guard(s.device, "send");
  s.complete(ncclSend(buffer, count, nccl_type(dtype), peer, s.comm, s.stream), "ncclSend", "send");
}

void NcclCommunicator::recv(void* buffer, size_t count, DType dtype, int peer, int tag) {
  Impl& s = *impl_;
  s.require_usable("recv");
  validate_rank(peer, s.size, "recv", "peer");
  validate_tag(tag, "recv");
  if (count == 0) return;
  CudaDeviceGuard guard(s.device, "recv");
  s.complete(ncclRecv(buffer, count, nccl_type(dtype), peer, s.comm, s.stream), "ncclRecv", "recv");
}

void NcclCommunicator::send_recv(const void* send, size_t send_count, int dest, void* recv, size_t recv_count,
                                 int source, DType dtype, int tag) {
  Impl& s = *impl_;
  s.require_usable("send_recv");
  validate_rank(dest, s.size, "send_recv", "dest");
  validate_rank(source, s.size, "send_recv", "source");
  validate_tag(tag, "send_recv");
  if (send_count == 0 && recv_count == 0) return;
  CudaDeviceGuard guard(s.device, "send_recv");
  const ncclDataType_t type = nccl_type(dtype);
  s.group("send_recv", [&] {
    if (send_count > 0)
      nccl_check(ncclSend(send, send_count, type, dest, s.comm, s.stream), "ncclSend", "send_recv", s.comm);
    if (recv_count > 0)
      nccl_check(ncclRecv(recv, recv_count, type, source, s.comm, s.stream), "ncclRecv", "send_recv", s.comm);
  });
}

}  // namespace fk::collectives
