#include "collectives/communicator.h"

namespace fk::collectives {

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMax:
      return "max";
  }
  return "?";
}

}  // namespace fk::collectives
