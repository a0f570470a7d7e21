// Loading a built candidate and calling it through the C ABI (kernels/fk_kernel.h).
//
// candidate_load() dlopens the library (RTLD_NOW | RTLD_LOCAL), checks that
// fk_kernel_abi_version() returns this build's FK_KERNEL_ABI_VERSION and finds the
// entry symbol. Libraries are never unloaded: a candidate that left a thread running
// must not have its code unmapped under it. candidate_invoke() turns an OpCall into
// fk_tensor descriptors and calls the entry with the op's arity (tensors in registry
// order, then the scalar parameters as doubles).
#pragma once

#include "kernels/candidate/manifest.h"
#include "kernels/op.h"

#include <memory>
#include <string>

namespace fk::kernels {

struct LoadedCandidate {
  CandidateManifest manifest;
  std::string library;
  void* handle = nullptr;
  void* entry = nullptr;
};

// Throws fk::Error (kInvalidArgument) naming the library and what is wrong.
std::shared_ptr<LoadedCandidate> candidate_load(const CandidateManifest& manifest, const std::string& library);

struct CandidateStatus {
  int code = 0;         // FK_OK, FK_ERROR_UNSUPPORTED, ...
  std::string message;  // what the candidate wrote to ctx->error
};

// `stream`: the cudaStream_t the call must enqueue on (ctx->stream; nullptr on the CPU).
CandidateStatus candidate_invoke(const LoadedCandidate& c, const OpDef& def, const OpCall& call, int num_threads,
                                 void* stream = nullptr);


}  // namespace fk::kernels
