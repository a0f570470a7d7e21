// cuDNN through dlopen, for the CUDA baselines that use its graph API (the fused
// attention of ops/attention_cudnn.cc). The cuDNN headers give the types and enums
// only: every entry point is resolved with dlsym, so nothing links against cuDNN, and
// a build or machine without it still runs (the callers fall back to their own
// kernels and say why).
//
// Where the library comes from, first hit wins:
//   1. FK_CUDNN_PATH: a library file, or a directory holding libcudnn.so.9 (or
//      libcudnn_graph.so.9); "off" disables cuDNN (the baselines then use their own
//      kernels, which is how benchmarks time those against cuDNN);
//   2. FK_CUDNN_LIBRARY, the library found at configure time (the CUDA toolkit's, or
//      the pip wheel nvidia-cudnn-cu13 of a python environment);
//   3. "libcudnn.so.9", then "libcudnn_graph.so.9", on the loader's search path.
// Only cuDNN 9 (the backend descriptor API of cudnn_graph.h) is accepted.
//
// This header includes cudnn_graph.h: only the .cc files of fk_cuda that drive cuDNN
// include it; everything else sees cudnn_status.h.
#pragma once

#include "kernels/cuda/cudnn_status.h"

#include <cudnn_graph.h>

#include <string>
#include <string_view>

namespace fk::cuda {

// The entry points, typed from the header's declarations (decltype does not reference
// the symbols). All are non-null when CudnnLibrary::usable().
struct CudnnApi {
  decltype(&::cudnnGetVersion) get_version = nullptr;
  decltype(&::cudnnGetErrorString) error_string = nullptr;
  decltype(&::cudnnGetLastErrorString) last_error_string = nullptr;
  decltype(&::cudnnCreate) create = nullptr;
  decltype(&::cudnnDestroy) destroy = nullptr;
  decltype(&::cudnnSetStream) set_stream = nullptr;
  decltype(&::cudnnBackendCreateDescriptor) create_descriptor = nullptr;
  decltype(&::cudnnBackendDestroyDescriptor) destroy_descriptor = nullptr;
  decltype(&::cudnnBackendSetAttribute) set_attribute = nullptr;
  decltype(&::cudnnBackendGetAttribute) get_attribute = nullptr;
  decltype(&::cudnnBackendFinalize) finalize = nullptr;
  decltype(&::cudnnBackendExecute) execute = nullptr;
};

// The process's cuDNN, loaded on first use (thread-safe), never unloaded.
const CudnnApi& cudnn_api();

// "<call> failed: CUDNN_STATUS_... (<code>): <cuDNN's last error message>".
std::string cudnn_describe(cudnnStatus_t status, std::string_view call);

}  // namespace fk::cuda
