// Run-time loading of the NVIDIA libraries the CUDA backend never links against
// (CUPTI, cuDNN, NVML): the first of several names dlopen accepts, and typed entry
// points by dlsym.
#pragma once

#include <dlfcn.h>
#include <fmt/format.h>

#include <string>
#include <vector>

namespace fk::cuda {

// Sets `f` to the symbol `name` of `lib` (null when absent); true when found.
template <typename F>
bool dl_resolve(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

struct DlOpened {
  void* handle = nullptr;  // null when no name loaded
  std::string name;        // the name dlopen accepted
  std::string tried;       // dlopen's reason for each name it refused, "; "-separated
};

// dlopen (RTLD_NOW | RTLD_LOCAL) of each name in order, until one loads.
inline DlOpened dl_open_first(const std::vector<std::string>& names) {
  DlOpened out;
  for (const std::string& name : names) {
    out.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (out.handle != nullptr) {
      out.name = name;
      return out;
    }
    const char* why = dlerror();
    out.tried += fmt::format("{}{}", out.tried.empty() ? "" : "; ", why != nullptr ? why : name);
  }
  return out;
}

}  // namespace fk::cuda
