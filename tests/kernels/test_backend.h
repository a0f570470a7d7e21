// The backend a kernels test binary runs on: FK_TEST_BACKEND ("cpu" or "cuda") names
// it at compile time, so one test source is built once per backend (ggml's
// test-backend-ops). Made once per binary; a missing device throws, failing the test.
#pragma once

#include "core/error.h"
#include "kernels/backends.h"

#include <memory>

namespace fk::kernels::test_support {

inline DeviceKind test_backend_kind() {
  const auto kind = device_kind_parse(FK_TEST_BACKEND);
  if (!kind) fail(ErrorKind::kInternal, "FK_TEST_BACKEND={} is not a backend", FK_TEST_BACKEND);
  return *kind;
}

inline Backend& test_backend() {
  static std::unique_ptr<Backend> backend = [] {
    register_builtin_ops();
    return backend_create(test_backend_kind(), 0);
  }();
  return *backend;
}

}  // namespace fk::kernels::test_support
