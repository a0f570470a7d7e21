// Argument checks shared by every Communicator backend, so that a bad peer, root,
// tag or per-rank vector gives the same fk::Error(kInvalidArgument) whichever backend
// runs, before any transport call (which could otherwise hang or abort).
// `op` names the operation in messages ("recv", "all_to_allv").
#pragma once

#include "core/dtype.h"

#include <cstddef>
#include <string_view>
#include <vector>

namespace fk::collectives {

// Throws kInvalidArgument unless 0 <= peer < size. `role` is "peer", "root", "source"...
void validate_rank(int peer, int size, std::string_view op, std::string_view role);
// Throws kInvalidArgument unless tag >= 0.
void validate_tag(int tag, std::string_view op);
// Throws kInvalidArgument unless both vectors hold `size` entries.
void validate_per_rank(const std::vector<size_t>& counts, const std::vector<size_t>& displs, int size,
                       std::string_view op, std::string_view side);
// Throws kInvalidArgument when count > 0 and send == recv (out-of-place operations).
void validate_not_aliased(const void* send, const void* recv, size_t count, std::string_view op);
// Throws kUnsupported naming the backend, dtype and op.
[[noreturn]] void fail_unsupported_reduction(std::string_view backend, std::string_view op, DType dtype,
                                             std::string_view reduce_op);

}  // namespace fk::collectives
