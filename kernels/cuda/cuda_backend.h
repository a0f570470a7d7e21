// Entry points of the CUDA backend that host code may call without CUDA headers.
#pragma once

#include "core/tensor.h"

#include <string>

namespace fk::cuda {

// Registers the cudaMalloc allocator for DeviceKind::kCuda. Idempotent.
void backend_init();
// Number of visible devices (0 when there is no driver or device).
int device_count();
// "NVIDIA H200 (sm_90, 139.8 GiB)" for device `index`.
std::string device_describe(int index);

// Copies between host and device tensors of equal dtype and shape (contiguous).
void copy_to_device(const Tensor& host, const Tensor& device);
void copy_to_host(const Tensor& device, const Tensor& host);

// vLLM rms_norm: out[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * weight, for
// fp32/fp16/bf16 [tokens, hidden] tensors on one device; fp32 accumulation.
// Enqueued on the default stream; no synchronisation inside.
void rms_norm(const Tensor& out, const Tensor& x, const Tensor& weight, double eps);

}  // namespace fk::cuda
