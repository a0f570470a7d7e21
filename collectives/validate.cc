#include "collectives/validate.h"

#include "core/error.h"

namespace fk::collectives {

void validate_rank(int peer, int size, std::string_view op, std::string_view role) {
  if (peer < 0 || peer >= size)
    fail(ErrorKind::kInvalidArgument, "{}: {} {} is outside the communicator's ranks [0, {})", op, role, peer, size);
}

void validate_tag(int tag, std::string_view op) {
  if (tag < 0) fail(ErrorKind::kInvalidArgument, "{}: tag {} is negative (tags must be >= 0)", op, tag);
}

void validate_per_rank(const std::vector<size_t>& counts, const std::vector<size_t>& displs, int size,
                       std::string_view op, std::string_view side) {
  const auto n = static_cast<size_t>(size);
  if (counts.size() != n || displs.size() != n)
    fail(ErrorKind::kInvalidArgument, "{}: {} counts/displacements have {}/{} entries; need one per rank ({})", op,
         side, counts.size(), displs.size(), size);
}

void validate_not_aliased(const void* send, const void* recv, size_t count, std::string_view op) {
  if (count > 0 && send == recv)
    fail(ErrorKind::kInvalidArgument, "{}: send and recv are the same buffer; {} is out of place only", op, op);
}

void fail_unsupported_reduction(std::string_view backend, std::string_view op, DType dtype,
                                std::string_view reduce_op) {
  fail(ErrorKind::kUnsupported, "{}: the {} backend cannot reduce {} with {} (see Communicator::supports)", op, backend,
       dtype_name(dtype), reduce_op);
}

}  // namespace fk::collectives
