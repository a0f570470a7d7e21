// The CUDA backend's DeviceTracer (kernels/backend.h): every kernel, copy and memset
// the process runs, on any stream, from CUPTI's activity records
// (kernels/cuda/cupti_trace.h), grouped in windows that the candidate worker opens and
// closes around each call.
//
// A window's end waits for the backend's stream, takes CUPTI's clock (the moment the
// call's own work was done), then waits for the whole device, so that work the call
// left on other streams is finished and recorded too: such work is `off_stream`, and
// work still running after the stream was done is `late`. Work recorded outside any
// window (launched after a call returned, e.g. from a thread of the candidate's) is
// what begin() returns. A sticky CUDA error met while waiting is the window's `error`.
#pragma once

#include "kernels/backend.h"

#include <memory>

namespace fk::cuda {

// The tracer for `stream` on `device` (current). Throws fk::Error (kRuntime) when
// CUPTI cannot be loaded or refuses; only one tracer may exist in a process.
std::unique_ptr<kernels::DeviceTracer> cuda_tracer_create(int device, void* stream);

}  // namespace fk::cuda
