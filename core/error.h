// Errors that carry where they happened.
//
// fk::Error is the exception type for expected failures inside the C++ code (bad
// input, I/O, unsupported configurations, runtime faults). It records a category,
// a user-facing message, and the source location that raised it. Programs catch it
// at main() (and never let it cross the candidate C ABI) and print what(); the
// location is kept for logs and debugging. Programmer bugs use FK_ASSERT, which
// aborts with the location: they are not user errors.
#pragma once

#include <fmt/format.h>

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace fk {

enum class ErrorKind {
  kInvalidArgument,  // bad input: a spec, a flag, a file's content
  kNotFound,         // a named file, tensor, op or symbol does not exist
  kIo,               // reading or writing failed
  kUnsupported,      // valid request this build or backend cannot serve
  kRuntime,          // a fault while running (collective failure, kernel error)
  kTimeout,          // a limit was exceeded
  kInternal,         // an invariant broke; indicates a bug
};

std::string_view error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message,
        std::source_location where = std::source_location::current());

  ErrorKind kind() const { return kind_; }
  const std::source_location& where() const { return where_; }
  // "file:line" of the raising code, for logs.
  std::string where_string() const;

 private:
  ErrorKind kind_;
  std::source_location where_;
};

// fail()'s format argument: the (compile-time checked) format string and the place
// that wrote it. A default argument cannot follow fail()'s parameter pack, so the
// caller's location is taken here, when the string literal converts.
template <typename... Args>
struct FormatAt {
  template <typename S>
    requires std::is_convertible_v<const S&, std::string_view>
  consteval FormatAt(const S& s, std::source_location at = std::source_location::current())  // NOLINT: implicit
      : format(s), where(at) {}
  fmt::format_string<Args...> format;
  std::source_location where;
};

// Throws fk::Error of the given kind with a fmt-formatted message, located where
// fail() was called.
template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, FormatAt<std::type_identity_t<Args>...> format, Args&&... args) {
  throw Error(kind, fmt::format(format.format, std::forward<Args>(args)...), format.where);
}

[[noreturn]] void assertion_failed(const char* expr, std::source_location where);

}  // namespace fk

// FK_ASSERT: programmer-bug check, active in every build type.
#define FK_ASSERT(cond)                                                        \
  do {                                                                         \
    if (!(cond)) ::fk::assertion_failed(#cond, std::source_location::current()); \
  } while (0)
