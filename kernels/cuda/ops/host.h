// Host-side helpers of the CUDA baselines (C++20): the stream every baseline enqueues
// on, the launch::Elem of a dtype, and the common capability test. Each op's .cc file
// unpacks an OpCall into plain pointers and sizes and calls its launcher (<op>_launch.h).
//
// Contract of a CUDA baseline's run(): every tensor of the call is on the current
// CUDA device; the work is enqueued on current_stream() and run() returns without
// synchronising; a failed launch throws fk::Error(kRuntime) naming the op and the error.
#pragma once

#include "kernels/cuda/ops/elem.h"
#include "kernels/op.h"

#include <cuda_runtime.h>

#include <optional>

namespace fk::cuda {

// The stream of the CUDA backend in use on this thread (the legacy default stream
// before one is set). Set by the CUDA backend; baselines only read it.
cudaStream_t current_stream();
void set_current_stream(cudaStream_t stream);

namespace host {

std::optional<launch::Elem> elem_of(DType dtype);
// Every defined tensor of `call` lives on a CUDA device and is contiguous.
bool device_contiguous(const kernels::OpCall& call);
// Throws fk::Error(kRuntime) "<op>: CUDA launch failed: <name> (<text>)" unless ok.
void check_launch(cudaError_t status, const char* op);
// The launch::Elem of `t`'s dtype; throws kUnsupported naming the op otherwise.
launch::Elem elem(const Tensor& t, const char* op);

}  // namespace host
}  // namespace fk::cuda
