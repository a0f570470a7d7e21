// cuDNN through dlopen (see cudnn_api.h): finds the library, resolves the entry points
// the baselines use, and checks that it is cuDNN 9. The loaded library and its entry
// points live in one heap object that is never destroyed (plans and handles made from
// it are kept until the process exits).
#include "kernels/cuda/cudnn_api.h"
#include "kernels/cuda/dl.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <utility>
#include <vector>

namespace fk::cuda {
namespace {

constexpr const char* kSonames[] = {"libcudnn.so.9", "libcudnn_graph.so.9"};

struct Loaded {
  CudnnLibrary library;
  CudnnApi api;
};

bool is_directory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The names to try, in order, for FK_CUDNN_PATH = setting.
std::vector<std::string> candidates(const std::string& setting) {
  std::vector<std::string> names;
  if (!setting.empty()) {
    if (is_directory(setting)) {
      for (const char* so : kSonames) names.push_back(setting + "/" + so);
    } else {
      names.push_back(setting);
    }
    return names;  // an explicit choice is not second-guessed
  }
#ifdef FK_CUDNN_LIBRARY
  names.emplace_back(FK_CUDNN_LIBRARY);
#endif
  for (const char* so : kSonames) names.emplace_back(so);
  return names;
}

Loaded load(const std::string& setting) {
  Loaded out;
  CudnnLibrary& lib = out.library;
  if (setting == "off") {
    lib.error = "disabled by FK_CUDNN_PATH=off";
    return out;
  }
  const DlOpened opened = dl_open_first(candidates(setting));
  void* handle = opened.handle;
  const std::string& tried = opened.tried;
  lib.path = opened.name;
  if (handle == nullptr) {
    lib.error = setting.empty()
                    ? fmt::format("cannot load cuDNN 9 ({}); install it (the CUDA toolkit's or the pip wheel "
                                  "nvidia-cudnn-cu13) and set FK_CUDNN_PATH to its lib directory",
                                  tried)
                    : fmt::format("FK_CUDNN_PATH={}: cannot load cuDNN 9 ({})", setting, tried);
    return out;
  }
  CudnnApi& a = out.api;
  const std::pair<bool, const char*> required[] = {
      {dl_resolve(handle, a.get_version, "cudnnGetVersion"), "cudnnGetVersion"},
      {dl_resolve(handle, a.error_string, "cudnnGetErrorString"), "cudnnGetErrorString"},
      {dl_resolve(handle, a.last_error_string, "cudnnGetLastErrorString"), "cudnnGetLastErrorString"},
      {dl_resolve(handle, a.create, "cudnnCreate"), "cudnnCreate"},
      {dl_resolve(handle, a.destroy, "cudnnDestroy"), "cudnnDestroy"},
      {dl_resolve(handle, a.set_stream, "cudnnSetStream"), "cudnnSetStream"},
      {dl_resolve(handle, a.create_descriptor, "cudnnBackendCreateDescriptor"), "cudnnBackendCreateDescriptor"},
      {dl_resolve(handle, a.destroy_descriptor, "cudnnBackendDestroyDescriptor"), "cudnnBackendDestroyDescriptor"},
      {dl_resolve(handle, a.set_attribute, "cudnnBackendSetAttribute"), "cudnnBackendSetAttribute"},
      {dl_resolve(handle, a.get_attribute, "cudnnBackendGetAttribute"), "cudnnBackendGetAttribute"},
      {dl_resolve(handle, a.finalize, "cudnnBackendFinalize"), "cudnnBackendFinalize"},
      {dl_resolve(handle, a.execute, "cudnnBackendExecute"), "cudnnBackendExecute"},
  };
  for (const auto& [ok, name] : required) {
    if (!ok) {
      lib.error = fmt::format("{} has no {}: not cuDNN 9", lib.path, name);
      out.api = {};
      return out;
    }
  }
  lib.version = a.get_version();
  if (lib.version < 90000 || lib.version >= 100000) {
    lib.error = fmt::format("{} is cuDNN {}; cuDNN 9 is needed", lib.path, lib.version);
    out.api = {};
  }
  return out;
}

std::string setting_from_env() {
  const char* v = std::getenv("FK_CUDNN_PATH");
  return v != nullptr ? v : "";
}

const Loaded& loaded() {
  static const Loaded* l = new Loaded(load(setting_from_env()));
  return *l;
}

}  // namespace

std::string CudnnLibrary::describe() const {
  if (!usable()) return "cudnn unavailable: " + error;
  return fmt::format("cudnn {}.{}.{} ({})", version / 10000, version % 10000 / 100, version % 100, path);
}

const CudnnLibrary& cudnn_library() { return loaded().library; }

const CudnnApi& cudnn_api() { return loaded().api; }

CudnnLibrary cudnn_probe(const std::string& setting) { return load(setting).library; }

std::string cudnn_describe(cudnnStatus_t status, std::string_view call) {
  const CudnnApi& a = cudnn_api();
  const char* name = a.error_string != nullptr ? a.error_string(status) : nullptr;
  std::string message;
  if (a.last_error_string != nullptr) {
    char buf[512] = {0};
    a.last_error_string(buf, sizeof buf);
    message = buf;
  }
  std::string out = fmt::format("{} failed: {} ({})", call, name != nullptr ? name : "cudnnStatus_t",
                                static_cast<int>(status));
  if (!message.empty()) out += ": " + message;
  return out;
}

}  // namespace fk::cuda
