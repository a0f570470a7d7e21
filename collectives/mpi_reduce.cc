// MpiCommunicator reductions. Native MPI types reduce directly (MPI_IN_PLACE for
// all_reduce with send == recv); fp16/bf16 are widened into fp32 scratch, reduced by
// MPI in fp32, and rounded once back to the element type, so a result whose exact
// value is representable in the element type comes back exact.
#include "collectives/mpi_check.h"
#include "collectives/mpi_communicator.h"
#include "collectives/validate.h"
#include "core/error.h"

#include <vector>

namespace fk::collectives {

namespace {

bool is_half(DType dtype) { return dtype == DType::kF16 || dtype == DType::kBF16; }

MPI_Op mpi_op(ReduceOp op) { return op == ReduceOp::kSum ? MPI_SUM : MPI_MAX; }

std::vector<float> widen(const void* src, DType dtype, size_t n) {
  std::vector<float> out(n);
  dtype_convert(src, dtype, out.data(), DType::kF32, n);
  return out;
}

}  // namespace

bool MpiCommunicator::supports(DType dtype, ReduceOp /*op*/) const {
  return mpi_reduce_type(dtype) != MPI_DATATYPE_NULL || is_half(dtype);
}

void MpiCommunicator::all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  if (!supports(dtype, op)) fail_unsupported_reduction(backend(), "all_reduce", dtype, reduce_op_name(op));
  const int n = mpi_count(count, "all_reduce");
  if (is_half(dtype)) {
    std::vector<float> acc = widen(send, dtype, count);
    mpi_check(MPI_Allreduce(MPI_IN_PLACE, acc.data(), n, MPI_FLOAT, mpi_op(op), comm_), "MPI_Allreduce", "all_reduce");
    dtype_convert(acc.data(), DType::kF32, recv, dtype, count);
    return;
  }
  const void* in = send == recv ? MPI_IN_PLACE : send;
  mpi_check(MPI_Allreduce(in, recv, n, mpi_reduce_type(dtype), mpi_op(op), comm_), "MPI_Allreduce", "all_reduce");
}

void MpiCommunicator::reduce_scatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op) {
  if (!supports(dtype, op)) fail_unsupported_reduction(backend(), "reduce_scatter", dtype, reduce_op_name(op));
  validate_not_aliased(send, recv, count, "reduce_scatter");
  const int n = mpi_count(count, "reduce_scatter");
  const size_t total = count * static_cast<size_t>(size_);
  mpi_count(total, "reduce_scatter");
  if (is_half(dtype)) {
    const std::vector<float> in = widen(send, dtype, total);
    std::vector<float> out(count);
    mpi_check(MPI_Reduce_scatter_block(in.data(), out.data(), n, MPI_FLOAT, mpi_op(op), comm_),
              "MPI_Reduce_scatter_block", "reduce_scatter");
    dtype_convert(out.data(), DType::kF32, recv, dtype, count);
    return;
  }
  mpi_check(MPI_Reduce_scatter_block(send, recv, n, mpi_reduce_type(dtype), mpi_op(op), comm_),
            "MPI_Reduce_scatter_block", "reduce_scatter");
}

}  // namespace fk::collectives
