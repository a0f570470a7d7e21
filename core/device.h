// The device kinds FastKernels runs on and a device value (kind + index). This is the
// one enum for "which backend": a job's `backend`, a candidate manifest's `backend`,
// a tensor's device and the kernels::Backend a job runs on all use DeviceKind.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fk {

enum class DeviceKind : uint8_t { kCpu, kCuda };

// "cpu", "cuda".
std::string_view device_kind_name(DeviceKind kind);
// The kind named `name` ("cpu", "cuda"), or nullopt.
std::optional<DeviceKind> device_kind_parse(std::string_view name);
// Every kind with its name, for spec choices and error messages.
const std::vector<std::pair<std::string, DeviceKind>>& device_kind_choices();

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;
  static Device cpu() { return {}; }
  static Device cuda(int i) { return {DeviceKind::kCuda, i}; }
  bool operator==(const Device&) const = default;
};

// "cpu", "cuda:0".
std::string device_name(Device device);

}  // namespace fk
