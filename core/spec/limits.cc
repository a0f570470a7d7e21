#include "core/spec/limits.h"

#include <cmath>
#include <fmt/format.h>

namespace fk::spec {

std::string IntRange::describe() const {
  if (max == std::numeric_limits<int64_t>::max()) return fmt::format("an integer >= {}", min);
  return fmt::format("an integer in [{}, {}]", min, max);
}

std::string RealRange::describe() const {
  if (std::isinf(max)) return fmt::format("a number {} {}", min_exclusive ? ">" : ">=", min);
  return fmt::format("a number in {}{}, {}]", min_exclusive ? "(" : "[", min, max);
}

}  // namespace fk::spec
