// MpiCommunicator: lifecycle, data movement, point-to-point and split. The reductions
// (with their fp32 staging of 16-bit floats) live in mpi_reduce.cc.
#include "collectives/mpi_communicator.h"

#include "collectives/mpi_check.h"
#include "collectives/validate.h"
#include "core/error.h"

#include <cstring>

namespace fk::collectives {

namespace {

void require_mpi_running(std::string_view what) {
  int initialized = 0, finalized = 0;
  mpi_check(MPI_Initialized(&initialized), "MPI_Initialized", what);
  mpi_check(MPI_Finalized(&finalized), "MPI_Finalized", what);
  if (!initialized || finalized)
    fail(ErrorKind::kRuntime, "{}: MPI is {}; call MPI_Init before and MPI_Finalize after using communicators", what,
         finalized ? "already finalized" : "not initialised");
}

std::vector<int> to_int_vector(const std::vector<size_t>& values, std::string_view op) {
  std::vector<int> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = mpi_count(values[i], op);
  return out;
}

// Checks that a completed receive delivered exactly `count` elements.
void check_received(const MPI_Status& status, MPI_Datatype type, size_t count, int source, int tag,
                    std::string_view op) {
  int got = 0;
  mpi_check(MPI_Get_count(&status, type, &got), "MPI_Get_count", op);
  if (got == MPI_UNDEFINED || static_cast<size_t>(got) != count)
    fail(ErrorKind::kRuntime, "{}: expected {} elements from rank {} (tag {}), received {}", op, count, source, tag,
         got);
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm owned) : comm_(owned) {
  mpi_check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", "mpi communicator");
  mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank", "mpi communicator");
  mpi_check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size", "mpi communicator");
}

std::unique_ptr<MpiCommunicator> MpiCommunicator::duplicate(MPI_Comm comm) {
  require_mpi_running("MpiCommunicator::duplicate");
  if (comm == MPI_COMM_NULL) fail(ErrorKind::kInvalidArgument, "MpiCommunicator::duplicate: MPI_COMM_NULL");
  MPI_Comm dup = MPI_COMM_NULL;
  mpi_check(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup", "MpiCommunicator::duplicate");
  return adopt(dup);
}

std::unique_ptr<MpiCommunicator> MpiCommunicator::adopt(MPI_Comm comm) {
  require_mpi_running("MpiCommunicator::adopt");
  if (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF)
    fail(ErrorKind::kInvalidArgument, "MpiCommunicator::adopt: cannot own MPI_COMM_NULL/WORLD/SELF; use duplicate()");
  try {
    return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(comm));
  } catch (...) {
    MPI_Comm_free(&comm);
    throw;
  }
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiCommunicator::all_gather(const void* send, void* recv, size_t count, DType dtype) {
  validate_not_aliased(send, recv, count, "all_gather");
  const int n = mpi_count(count, "all_gather");
  mpi_count(count * static_cast<size_t>(size_), "all_gather");
  const MPI_Datatype type = mpi_move_type(dtype);
  mpi_check(MPI_Allgather(send, n, type, recv, n, type, comm_), "MPI_Allgather", "all_gather");
}

void MpiCommunicator::all_to_all(const void* send, void* recv, size_t count, DType dtype) {
  validate_not_aliased(send, recv, count, "all_to_all");
  const int n = mpi_count(count, "all_to_all");
  const MPI_Datatype type = mpi_move_type(dtype);
  mpi_check(MPI_Alltoall(send, n, type, recv, n, type, comm_), "MPI_Alltoall", "all_to_all");
}

void MpiCommunicator::all_to_allv(const void* send, const std::vector<size_t>& send_counts,
                                  const std::vector<size_t>& send_displs, void* recv,
                                  const std::vector<size_t>& recv_counts, const std::vector<size_t>& recv_displs,
                                  DType dtype) {
  validate_per_rank(send_counts, send_displs, size_, "all_to_allv", "send");
  validate_per_rank(recv_counts, recv_displs, size_, "all_to_allv", "recv");
  const std::vector<int> sc = to_int_vector(send_counts, "all_to_allv");
  const std::vector<int> sd = to_int_vector(send_displs, "all_to_allv");
  const std::vector<int> rc = to_int_vector(recv_counts, "all_to_allv");
  const std::vector<int> rd = to_int_vector(recv_displs, "all_to_allv");
  const MPI_Datatype type = mpi_move_type(dtype);
  mpi_check(MPI_Alltoallv(send, sc.data(), sd.data(), type, recv, rc.data(), rd.data(), type, comm_), "MPI_Alltoallv",
            "all_to_allv");
}

void MpiCommunicator::broadcast(void* buffer, size_t count, DType dtype, int root) {
  validate_rank(root, size_, "broadcast", "root");
  mpi_check(MPI_Bcast(buffer, mpi_count(count, "broadcast"), mpi_move_type(dtype), root, comm_), "MPI_Bcast",
            "broadcast");
}

void MpiCommunicator::send(const void* buffer, size_t count, DType dtype, int peer, int tag) {
  validate_rank(peer, size_, "send", "peer");
  validate_tag(tag, "send");
  mpi_check(MPI_Send(buffer, mpi_count(count, "send"), mpi_move_type(dtype), peer, tag, comm_), "MPI_Send", "send");
}

void MpiCommunicator::recv(void* buffer, size_t count, DType dtype, int peer, int tag) {
  validate_rank(peer, size_, "recv", "peer");
  validate_tag(tag, "recv");
  const MPI_Datatype type = mpi_move_type(dtype);
  MPI_Status status;
  mpi_check(MPI_Recv(buffer, mpi_count(count, "recv"), type, peer, tag, comm_, &status), "MPI_Recv", "recv");
  check_received(status, type, count, peer, tag, "recv");
}

void MpiCommunicator::send_recv(const void* send, size_t send_count, int dest, void* recv, size_t recv_count,
                                int source, DType dtype, int tag) {
  validate_rank(dest, size_, "send_recv", "dest");
  validate_rank(source, size_, "send_recv", "source");
  validate_tag(tag, "send_recv");
  if (dest == rank_ && source == rank_) {
    // A self exchange is a copy. (Open MPI's MPI_Sendrecv to self silently truncates a
    // longer message instead of reporting MPI_ERR_TRUNCATE, so the check is ours.)
    if (send_count != recv_count)
      fail(ErrorKind::kRuntime, "send_recv: a self exchange sends {} elements but receives {} (tag {})", send_count,
           recv_count, tag);
    if (send_count > 0 && send != recv) std::memmove(recv, send, send_count * dtype_size(dtype));
    return;
  }
  const MPI_Datatype type = mpi_move_type(dtype);
  MPI_Status status;
  mpi_check(MPI_Sendrecv(send, mpi_count(send_count, "send_recv"), type, dest, tag, recv,
                         mpi_count(recv_count, "send_recv"), type, source, tag, comm_, &status),
            "MPI_Sendrecv", "send_recv");
  check_received(status, type, recv_count, source, tag, "send_recv");
}

void MpiCommunicator::barrier() { mpi_check(MPI_Barrier(comm_), "MPI_Barrier", "barrier"); }

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split", "split");
  if (out == MPI_COMM_NULL) return nullptr;
  return adopt(out);
}

std::unique_ptr<Communicator> mpi_world() { return MpiCommunicator::duplicate(MPI_COMM_WORLD); }

std::unique_ptr<Communicator> mpi_wrap(MPI_Comm comm) { return MpiCommunicator::duplicate(comm); }

}  // namespace fk::collectives
