// Building a candidate folder into a shared library with the production flags, in a
// sandboxed subprocess with a time limit, cached by content.
//
// CPU: the project's C++ compiler, -std=c++17 -O3 -fPIC -shared. CUDA: nvcc -std=c++17
// -O3 for sm_90a with the flags PyTorch extensions (hence vLLM's csrc) build with:
// --expt-relaxed-constexpr --expt-extended-lambda and the four __CUDA_NO_HALF* macros.
// The cache key hashes the manifest's build fields, every file in the candidate's folder
// (sources, local headers, kernel.yaml), fk_kernel.h, the
// command line and the compiler's version, so editing any of them rebuilds; the library
// is renamed into place, so concurrent builds of the same candidate are safe.
#pragma once

#include "kernels/candidate/manifest.h"

#include <string>
#include <vector>

namespace fk::kernels {

struct CompileOptions {
  std::string cxx;          // default: the compiler this project was built with
  std::string nvcc;         // default: the CUDA compiler found at configure time, else "nvcc"
  std::string include_dir;  // folder holding fk_kernel.h
  std::string cache_dir;    // default: $FK_CACHE_DIR, else $XDG_CACHE_HOME/fastkernels, else ~/.cache/fastkernels
  std::string cuda_arch = "90a";
  double timeout_s = 300;
  // fk-candidate-worker: the compiler runs under `fk-candidate-worker --exec` in the
  // sandbox (kernels/candidate/sandbox.h): it reads only system folders, the include
  // folder and the candidate's folder, and writes only its build folder.
  std::string sandbox_exec;
  static CompileOptions defaults();
};

struct CompileResult {
  bool ok = false;
  bool cached = false;
  std::string library;               // path of the .so when ok
  std::string key;                   // content hash
  std::vector<std::string> command;  // as run
  std::string log;                   // the compiler's output
  std::string reason;                // one line: why it failed
  double seconds = 0;
};

CompileResult candidate_compile(const CandidateManifest& manifest, const CompileOptions& options);

// The command line for `manifest` writing `output` (exposed for docs and tests).
std::vector<std::string> candidate_compile_command(const CandidateManifest& manifest, const CompileOptions& options,
                                                   const std::string& output);

}  // namespace fk::kernels
