// Device buffers for the NCCL suites: the CUDA backend of one device and its memory as a
// BufferSpace (kernels/backend_space.h), the one CUDA memory layer of the product.
#pragma once

#include "collectives/buffer_space.h"
#include "kernels/backend_space.h"
#include "kernels/backends.h"

#include <memory>

namespace fk::collectives::testing {

struct DeviceSpace {
  explicit DeviceSpace(int device)
      : backend(kernels::backend_create(DeviceKind::kCuda, device)), space(kernels::backend_buffer_space(*backend)) {}
  std::unique_ptr<kernels::Backend> backend;
  std::unique_ptr<BufferSpace> space;  // destroyed first: its blocks go back before the backend
};

}  // namespace fk::collectives::testing
