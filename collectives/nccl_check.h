// NCCL and CUDA plumbing for the NCCL backend: return codes into fk::Error, DType to
// ncclDataType_t, and a guard that makes a device current for a scope. Internal to
// collectives/; includes nccl.h and cuda_runtime.h.
#pragma once

#include "core/dtype.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <source_location>
#include <string_view>

namespace fk::collectives {

// Throws fk::Error(kRuntime) "<op>: <call> failed: <ncclGetErrorString> (<ncclGetLastError>)"
// unless r is ncclSuccess or ncclInProgress (non-blocking calls in flight). comm may be null.
void nccl_check(ncclResult_t r, std::string_view call, std::string_view op, ncclComm_t comm,
                std::source_location where = std::source_location::current());

// Throws fk::Error(kRuntime) "<op>: <call> failed: <cudaGetErrorName>: <cudaGetErrorString>".
void cuda_check(cudaError_t e, std::string_view call, std::string_view op,
                std::source_location where = std::source_location::current());

ncclDataType_t nccl_type(DType dtype);

// Makes `device` current for the guard's lifetime, restoring the previous one after.
class CudaDeviceGuard {
 public:
  CudaDeviceGuard(int device, std::string_view op);
  ~CudaDeviceGuard();
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

}  // namespace fk::collectives
