// HDF5 failures as fk::Error that name the file and the object.
//
// Every failing HDF5 call in fk::h5 becomes fk::Error(kIo) with the text
//   "<file>: <object path>: <what we tried> (HDF5: <innermost HDF5 message>)"
// where <file> is the path the user gave (the target, not a writer's temporary file)
// and the HDF5 part is the most specific entry of HDF5's error stack, i.e. where the
// library first detected the problem ("file signature not found", ...). HDF5's own
// automatic printing to stderr is switched off (quiet_errors(), called by every way
// of opening or creating a file), so a caught error prints nothing. Failures we detect
// ourselves (missing objects, wrong types) use fail_at() with a fitting kind.
// Not thread-safe beyond what the HDF5 build is: use one file from one thread.
#pragma once

#include "core/error.h"

#include <source_location>
#include <string>
#include <string_view>

namespace fk::h5 {

// Where an operation acts: the file as the user named it and the object path in it.
struct Where {
  std::string_view file;
  std::string_view object;
};

// Turns off HDF5's automatic error printing for the calling thread. Idempotent.
void quiet_errors();

// The innermost message of the calling thread's HDF5 error stack with its minor
// class ("file signature not found [file format]"), or "" when the stack is empty.
// Clears the stack.
std::string take_error_message();

// Throws fk::Error(kIo) for an HDF5 call that just failed (reads the error stack).
[[noreturn]] void fail_io(Where where, std::string_view action,
                          std::source_location loc = std::source_location::current());

// The same with a message taken earlier by take_error_message(), for callers that must
// run HDF5 clean-up between the failing call and the throw.
[[noreturn]] void fail_io_with(Where where, std::string_view action, std::string hdf5_message,
                               std::source_location loc = std::source_location::current());

// Throws fk::Error(kind) "<file>: <object>: <message>" (no HDF5 stack involved).
[[noreturn]] void fail_at(ErrorKind kind, Where where, std::string_view message,
                          std::source_location loc = std::source_location::current());

}  // namespace fk::h5
