#include "collectives/mpi_check.h"

#include "core/error.h"

#include <climits>

namespace fk::collectives {

namespace {

std::string_view error_class_name(int cls) {
  switch (cls) {
    case MPI_ERR_BUFFER:
      return "MPI_ERR_BUFFER";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE";
    case MPI_ERR_TAG:
      return "MPI_ERR_TAG";
    case MPI_ERR_COMM:
      return "MPI_ERR_COMM";
    case MPI_ERR_RANK:
      return "MPI_ERR_RANK";
    case MPI_ERR_ROOT:
      return "MPI_ERR_ROOT";
    case MPI_ERR_OP:
      return "MPI_ERR_OP";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG";
    case MPI_ERR_TRUNCATE:
      return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER:
      return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN:
      return "MPI_ERR_INTERN";
    case MPI_ERR_IN_STATUS:
      return "MPI_ERR_IN_STATUS";
    case MPI_ERR_PENDING:
      return "MPI_ERR_PENDING";
    default:
      return "MPI error";
  }
}

}  // namespace

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  int cls = MPI_ERR_UNKNOWN;
  if (MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = MPI_ERR_UNKNOWN;
  std::string message = length > 0 ? std::string(text, static_cast<size_t>(length)) : "unknown error";
  return fmt::format("{}: {} (code {})", error_class_name(cls), message, code);
}

void mpi_check(int rc, std::string_view call, std::string_view op, std::source_location where) {
  if (rc == MPI_SUCCESS) return;
  throw Error(ErrorKind::kRuntime, fmt::format("{}: {} failed: {}", op, call, mpi_error_text(rc)), where);
}

MPI_Datatype mpi_move_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return MPI_FLOAT;
    case DType::kF64:
      return MPI_DOUBLE;
    case DType::kF16:
    case DType::kBF16:
      return MPI_UINT16_T;
    case DType::kI32:
      return MPI_INT32_T;
    case DType::kI64:
      return MPI_INT64_T;
    case DType::kU8:
      return MPI_UINT8_T;
  }
  fail(ErrorKind::kInternal, "mpi_move_type: unknown dtype {}", static_cast<int>(dtype));
}

MPI_Datatype mpi_reduce_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return MPI_FLOAT;
    case DType::kF64:
      return MPI_DOUBLE;
    case DType::kI32:
      return MPI_INT32_T;
    case DType::kI64:
      return MPI_INT64_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

int mpi_count(size_t count, std::string_view op) {
  if (count > static_cast<size_t>(INT_MAX))
    fail(ErrorKind::kUnsupported, "{}: {} elements exceed MPI's int count limit ({}); split the transfer", op, count,
         INT_MAX);
  return static_cast<int>(count);
}

}  // namespace fk::collectives
