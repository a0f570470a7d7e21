#include "kernels/cuda/nvml.h"

#include "kernels/cuda/dl.h"

#include <dlfcn.h>

#include <mutex>

namespace fk::cuda {
namespace {

// NVML's ABI (nvml.h): return codes are ints, 0 is NVML_SUCCESS; devices are opaque.
using NvmlDevice = void*;
enum : unsigned { kClockGraphics = 0, kClockSm = 1, kClockMem = 2 };
enum : unsigned { kTemperatureGpu = 0 };

struct Nvml {
  int (*init)() = nullptr;
  int (*by_pci)(const char*, NvmlDevice*) = nullptr;
  int (*clock)(NvmlDevice, unsigned, unsigned*) = nullptr;
  int (*temperature)(NvmlDevice, unsigned, unsigned*) = nullptr;
  int (*power)(NvmlDevice, unsigned*) = nullptr;
  int (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
  int (*driver)(char*, unsigned) = nullptr;
  bool ok = false;
};

Nvml& nvml() {
  static Nvml n;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    dl_resolve(lib, n.init, "nvmlInit_v2");
    dl_resolve(lib, n.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    dl_resolve(lib, n.clock, "nvmlDeviceGetClockInfo");
    dl_resolve(lib, n.temperature, "nvmlDeviceGetTemperature");
    dl_resolve(lib, n.power, "nvmlDeviceGetPowerUsage");
    dl_resolve(lib, n.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (n.reasons == nullptr) dl_resolve(lib, n.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    dl_resolve(lib, n.driver, "nvmlSystemGetDriverVersion");
    n.ok = n.init != nullptr && n.by_pci != nullptr && n.init() == 0;
  });
  return n;
}

}  // namespace

kernels::DeviceState nvml_state(const std::string& pci_bus_id) {
  kernels::DeviceState s;
  Nvml& n = nvml();
  NvmlDevice dev = nullptr;
  if (!n.ok || pci_bus_id.empty() || n.by_pci(pci_bus_id.c_str(), &dev) != 0) return s;
  unsigned v = 0;
  if (n.clock && n.clock(dev, kClockSm, &v) == 0) s.sm_clock_mhz = static_cast<int>(v);
  if (n.clock && n.clock(dev, kClockMem, &v) == 0) s.mem_clock_mhz = static_cast<int>(v);
  if (n.temperature && n.temperature(dev, kTemperatureGpu, &v) == 0) s.temperature_c = static_cast<int>(v);
  if (n.power && n.power(dev, &v) == 0) s.power_w = v / 1000.0;
  unsigned long long reasons = 0;
  if (n.reasons && n.reasons(dev, &reasons) == 0) {
    s.throttle_reasons = reasons;
    s.throttled = (reasons & kernels::kThrottleSlowdownMask) != 0;
  }
  return s;
}

std::string nvml_driver_version() {
  Nvml& n = nvml();
  char buf[96] = {};
  if (!n.ok || n.driver == nullptr || n.driver(buf, sizeof(buf)) != 0) return "";
  return std::string("driver ") + buf;
}

}  // namespace fk::cuda
