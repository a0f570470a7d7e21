// cuBLASLt through dlopen (see cublaslt_api.h). The loaded library and its entry
// points live in one heap object that is never destroyed (handles and algorithms made
// from it are kept until the process exits).
#include "kernels/cuda/cublaslt_api.h"

#include "core/error.h"
#include "kernels/cuda/dl.h"

#include <fmt/format.h>

#include <cstdlib>
#include <utility>
#include <vector>

namespace fk::cuda {
namespace {

struct Loaded {
  CublasLtLibrary library;
  CublasLtApi api;
};

std::vector<std::string> candidates(const std::string& setting) {
  if (!setting.empty()) return {setting};
  std::vector<std::string> names;
#ifdef FK_CUBLASLT_LIBRARY
  names.emplace_back(FK_CUBLASLT_LIBRARY);
#endif
  names.push_back(fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR));
  return names;
}

Loaded load(const std::string& setting) {
  Loaded out;
  CublasLtLibrary& lib = out.library;
  const DlOpened opened = dl_open_first(candidates(setting));
  if (opened.handle == nullptr) {
    lib.error = setting.empty() ? fmt::format(
                                      "cannot load cuBLASLt {} ({}); install the CUDA toolkit's libcublasLt "
                                      "or set FK_CUBLASLT_PATH to the library file",
                                      CUBLAS_VER_MAJOR, opened.tried)
                                : fmt::format("FK_CUBLASLT_PATH={}: cannot load it ({})", setting, opened.tried);
    return out;
  }
  lib.path = opened.name;
  CublasLtApi& a = out.api;
  void* h = opened.handle;
  const std::pair<bool, const char*> required[] = {
      {dl_resolve(h, a.get_version, "cublasLtGetVersion"), "cublasLtGetVersion"},
      {dl_resolve(h, a.status_name, "cublasLtGetStatusName"), "cublasLtGetStatusName"},
      {dl_resolve(h, a.status_string, "cublasLtGetStatusString"), "cublasLtGetStatusString"},
      {dl_resolve(h, a.create, "cublasLtCreate"), "cublasLtCreate"},
      {dl_resolve(h, a.matmul, "cublasLtMatmul"), "cublasLtMatmul"},
      {dl_resolve(h, a.algo_get_heuristic, "cublasLtMatmulAlgoGetHeuristic"), "cublasLtMatmulAlgoGetHeuristic"},
      {dl_resolve(h, a.algo_config_get_attribute, "cublasLtMatmulAlgoConfigGetAttribute"),
       "cublasLtMatmulAlgoConfigGetAttribute"},
      {dl_resolve(h, a.matmul_desc_create, "cublasLtMatmulDescCreate"), "cublasLtMatmulDescCreate"},
      {dl_resolve(h, a.matmul_desc_destroy, "cublasLtMatmulDescDestroy"), "cublasLtMatmulDescDestroy"},
      {dl_resolve(h, a.matmul_desc_set_attribute, "cublasLtMatmulDescSetAttribute"), "cublasLtMatmulDescSetAttribute"},
      {dl_resolve(h, a.preference_create, "cublasLtMatmulPreferenceCreate"), "cublasLtMatmulPreferenceCreate"},
      {dl_resolve(h, a.preference_destroy, "cublasLtMatmulPreferenceDestroy"), "cublasLtMatmulPreferenceDestroy"},
      {dl_resolve(h, a.preference_set_attribute, "cublasLtMatmulPreferenceSetAttribute"),
       "cublasLtMatmulPreferenceSetAttribute"},
      {dl_resolve(h, a.layout_create, "cublasLtMatrixLayoutCreate"), "cublasLtMatrixLayoutCreate"},
      {dl_resolve(h, a.layout_destroy, "cublasLtMatrixLayoutDestroy"), "cublasLtMatrixLayoutDestroy"},
      {dl_resolve(h, a.layout_set_attribute, "cublasLtMatrixLayoutSetAttribute"), "cublasLtMatrixLayoutSetAttribute"},
  };
  for (const auto& [ok, name] : required) {
    if (!ok) {
      lib.error = fmt::format("{} has no {}: not cuBLASLt", lib.path, name);
      out.api = {};
      return out;
    }
  }
  lib.version = a.get_version();
  if (lib.version / 10000 != CUBLAS_VER_MAJOR) {
    lib.error = fmt::format("{} is cuBLASLt {}.{}; FastKernels was built with the headers of cuBLAS {}", lib.path,
                            lib.version / 10000, lib.version % 10000 / 100, CUBLAS_VER_MAJOR);
    out.api = {};
  }
  return out;
}

const Loaded& loaded() {
  static const Loaded* l = [] {
    const char* v = std::getenv("FK_CUBLASLT_PATH");
    return new Loaded(load(v != nullptr ? v : ""));
  }();
  return *l;
}

}  // namespace

std::string CublasLtLibrary::describe() const {
  if (!usable()) return "cublasLt unavailable: " + error;
  return fmt::format("cublasLt {}.{}.{} ({})", version / 10000, version % 10000 / 100, version % 100, path);
}

const CublasLtApi& cublaslt_api() {
  const Loaded& l = loaded();
  if (!l.library.usable()) fail(ErrorKind::kNotFound, "linear: {}", l.library.error);
  return l.api;
}

const CublasLtLibrary& cublaslt_library() { return loaded().library; }

CublasLtLibrary cublaslt_probe(const std::string& setting) { return load(setting).library; }

}  // namespace fk::cuda
