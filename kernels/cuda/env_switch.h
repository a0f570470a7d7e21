// Two-valued environment settings of the CUDA backend's libraries (FK_CUDNN_AUTOTUNE,
// FK_CUBLASLT_AUTOTUNE, FK_CUDNN_ATTENTION_FORM, ...).
#pragma once

#include "core/error.h"

#include <cstdlib>
#include <string_view>

namespace fk::cuda {

// True when `name` is unset, empty or `yes`, false when it is `no`; anything else is an
// fk::Error(kInvalidArgument) naming the variable, its value and both settings.
inline bool env_switch(const char* name, std::string_view yes, std::string_view no) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0' || std::string_view(v) == yes) return true;
  if (std::string_view(v) == no) return false;
  fail(ErrorKind::kInvalidArgument, "{}={}: not '{}' or '{}'", name, v, yes, no);
}

}  // namespace fk::cuda
