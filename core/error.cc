#include "core/error.h"

#include <cstdio>
#include <cstdlib>

namespace fk {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kIo: return "I/O error";
    case ErrorKind::kUnsupported: return "unsupported";
    case ErrorKind::kRuntime: return "runtime error";
    case ErrorKind::kTimeout: return "timeout";
    case ErrorKind::kInternal: return "internal error";
  }
  return "error";
}

Error::Error(ErrorKind kind, std::string message, std::source_location where)
    : std::runtime_error(std::move(message)), kind_(kind), where_(where) {}

std::string Error::where_string() const {
  return fmt::format("{}:{}", where_.file_name(), where_.line());
}

void assertion_failed(const char* expr, std::source_location where) {
  std::fprintf(stderr, "fk: internal assertion failed: %s at %s:%u (%s)\n", expr,
               where.file_name(), static_cast<unsigned>(where.line()), where.function_name());
  std::abort();
}

}  // namespace fk
