// NVML through dlopen("libnvidia-ml.so.1"): no nvml.h ships with every toolkit, and a
// machine without the driver library must still run (every reading is then unknown).
// The handful of entry points used are declared here with NVML's documented ABI.
#pragma once

#include "kernels/backend.h"

#include <string>

namespace fk::cuda {

// Readings of the GPU with PCI bus id `pci_bus_id` ("0000:19:00.0", as
// cudaDeviceGetPCIBusId gives it; CUDA and NVML number devices differently).
// Thread-safe; a field NVML does not report stays negative.
kernels::DeviceState nvml_state(const std::string& pci_bus_id);
// "driver 580.65.06" or "" without NVML.
std::string nvml_driver_version();

}  // namespace fk::cuda
