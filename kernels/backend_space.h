// A collectives::BufferSpace over a kernels::Backend: the memory a communicator's
// buffers live in, made by the backend's allocator (CUDA: its caching allocator) and
// filled by its upload/download. The bandwidth probe and the collective conformance
// suites take their buffers from here, so the CUDA backend is the one CUDA memory layer.
#pragma once

#include "collectives/buffer_space.h"
#include "kernels/backend.h"

#include <memory>

namespace fk::kernels {

// The space of `backend`'s device; the backend must outlive it. upload/download are
// synchronous (they wait for the backend's stream), as BufferSpace requires.
std::unique_ptr<collectives::BufferSpace> backend_buffer_space(Backend& backend);

}  // namespace fk::kernels
