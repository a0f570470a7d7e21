// cuBLASLt through dlopen, for the CUDA linear baseline (ops/linear_lt.cc). Linking
// libcublasLt costs every process that links the CUDA backend about 0.4 s at start
// (its static initialisers run whether or not a GEMM is ever made): every `fk`,
// `fk-runner` and worker of a CPU job, and every test process. Loaded on first use
// instead, it costs only the runs that multiply on a GPU. cublasLt.h gives the types
// and enums; every entry point is resolved with dlsym.
//
// Where the library comes from, first hit wins:
//   1. FK_CUBLASLT_PATH: a library file (an explicit choice, not second-guessed);
//   2. FK_CUBLASLT_LIBRARY, the library found at configure time (the CUDA toolkit's);
//   3. "libcublasLt.so.<the headers' major>" on the loader's search path.
// The library's major version must be the headers'.
#pragma once

#include <cublasLt.h>

#include <string>

namespace fk::cuda {

// The entry points, typed from the header's declarations (decltype does not reference
// the symbols). All are non-null once cublaslt_api() has returned.
struct CublasLtApi {
  decltype(&::cublasLtGetVersion) get_version = nullptr;
  decltype(&::cublasLtGetStatusName) status_name = nullptr;
  decltype(&::cublasLtGetStatusString) status_string = nullptr;
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic = nullptr;
  decltype(&::cublasLtMatmulAlgoConfigGetAttribute) algo_config_get_attribute = nullptr;
  decltype(&::cublasLtMatmulDescCreate) matmul_desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) matmul_desc_destroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) preference_set_attribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) layout_set_attribute = nullptr;
};

// Which library a setting of FK_CUBLASLT_PATH ("" for none) loads, or why none.
struct CublasLtLibrary {
  std::string path;    // the name dlopen accepted
  size_t version = 0;  // cublasLtGetVersion(): major * 10000 + minor * 100 + patch
  std::string error;   // why it is unusable; empty when usable
  bool usable() const { return error.empty(); }
  // "cublasLt 13.1.0 (<path>)" or "cublasLt unavailable: <why>".
  std::string describe() const;
};

// The process's cuBLASLt, loaded on the first call (thread-safe), never unloaded.
// Throws fk::Error(kNotFound) naming every library tried and why it was refused (and
// again on every later call: a process without cuBLASLt has no CUDA linear baseline).
const CublasLtApi& cublaslt_api();

// The process's cuBLASLt library (loading it), usable or not.
const CublasLtLibrary& cublaslt_library();

// Loads the library `setting` names as the process would, without keeping it as the
// process's (the loader's tests).
CublasLtLibrary cublaslt_probe(const std::string& setting);

}  // namespace fk::cuda
