// MPI plumbing for the MPI backend: turning return codes into fk::Error, mapping
// DTypes to MPI datatypes, and narrowing size_t counts to MPI's int counts.
//
// Invariant: every MPI call of the backend goes through mpi_check (the backend's
// communicators use MPI_ERRORS_RETURN, so a failure comes back as a code instead of
// aborting the job). Internal to collectives/; include mpi.h.
#pragma once

#include "core/dtype.h"

#include <mpi.h>

#include <cstddef>
#include <source_location>
#include <string>
#include <string_view>

namespace fk::collectives {

// "MPI_ERR_RANK: invalid rank" for an MPI error code (class name and MPI_Error_string).
std::string mpi_error_text(int code);

// Throws fk::Error(kRuntime) "<op>: <call> failed: <MPI_Error_string>" unless
// rc == MPI_SUCCESS; `where` defaults to the caller's location.
void mpi_check(int rc, std::string_view call, std::string_view op,
               std::source_location where = std::source_location::current());

// The datatype that moves `dtype` bit-exactly (fp16/bf16 travel as uint16).
MPI_Datatype mpi_move_type(DType dtype);

// The datatype MPI reduces natively for `dtype`, or MPI_DATATYPE_NULL (fp16, bf16 and
// uint8 have none: the backend stages 16-bit floats through fp32).
MPI_Datatype mpi_reduce_type(DType dtype);

// Narrows an element count to MPI's int, throwing kUnsupported beyond INT_MAX.
int mpi_count(size_t count, std::string_view op);

}  // namespace fk::collectives
