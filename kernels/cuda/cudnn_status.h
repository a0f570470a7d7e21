// Whether this process can use cuDNN, and which one (see cudnn_api.h for where the
// library is looked for). No cuDNN header is needed to ask.
#pragma once

#include <cstddef>
#include <string>

namespace fk::cuda {

struct CudnnLibrary {
  std::string path;     // what dlopen accepted; empty when not loaded
  size_t version = 0;   // cudnnGetVersion(): 92400 for 9.24.0; 0 when not loaded
  std::string error;    // why cuDNN is unusable ("" when usable), naming what was tried
  bool usable() const { return error.empty(); }
  // "cudnn 9.24.0 (/path/libcudnn.so.9)" or "cudnn unavailable: <error>".
  std::string describe() const;
};

// Loads cuDNN on the first call (later calls return the same record). Needs no GPU.
const CudnnLibrary& cudnn_library();

}  // namespace fk::cuda

namespace fk::cuda {

// What cudnn_library() would find if FK_CUDNN_PATH were `setting` ("" = unset); for
// tests and `fk` diagnostics. Does not change the process's cuDNN.
CudnnLibrary cudnn_probe(const std::string& setting);

}  // namespace fk::cuda
