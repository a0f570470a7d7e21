#include "collectives/nccl_check.h"
#include "collectives/nccl_communicator.h"

#include "core/error.h"

namespace fk::collectives {

void nccl_check(ncclResult_t r, std::string_view call, std::string_view op, ncclComm_t comm,
                std::source_location where) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  const char* last = ncclGetLastError(comm);
  throw Error(ErrorKind::kRuntime,
              fmt::format("{}: {} failed: {}{}{}", op, call, ncclGetErrorString(r),
                          last != nullptr && *last != '\0' ? " — " : "", last != nullptr ? last : ""),
              where);
}

void cuda_check(cudaError_t e, std::string_view call, std::string_view op, std::source_location where) {
  if (e == cudaSuccess) return;
  throw Error(ErrorKind::kRuntime,
              fmt::format("{}: {} failed: {}: {}", op, call, cudaGetErrorName(e), cudaGetErrorString(e)), where);
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return ncclFloat32;
    case DType::kF16:
      return ncclFloat16;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kF64:
      return ncclFloat64;
    case DType::kI32:
      return ncclInt32;
    case DType::kI64:
      return ncclInt64;
    case DType::kU8:
      return ncclUint8;
  }
  fail(ErrorKind::kInternal, "nccl_type: unknown dtype {}", static_cast<int>(dtype));
}

CudaDeviceGuard::CudaDeviceGuard(int device, std::string_view op) {
  cuda_check(cudaGetDevice(&previous_), "cudaGetDevice", op);
  if (previous_ != device) {
    cuda_check(cudaSetDevice(device), "cudaSetDevice", op);
    changed_ = true;
  }
}

CudaDeviceGuard::~CudaDeviceGuard() {
  if (changed_) cudaSetDevice(previous_);
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky "no device / no driver" error
    return 0;
  }
  return n;
}

}  // namespace fk::collectives
