#include "core/device.h"

#include <fmt/format.h>

namespace fk {

const std::vector<std::pair<std::string, DeviceKind>>& device_kind_choices() {
  static const std::vector<std::pair<std::string, DeviceKind>> choices = {{"cpu", DeviceKind::kCpu},
                                                                          {"cuda", DeviceKind::kCuda}};
  return choices;
}

std::string_view device_kind_name(DeviceKind kind) { return kind == DeviceKind::kCpu ? "cpu" : "cuda"; }

std::optional<DeviceKind> device_kind_parse(std::string_view name) {
  for (const auto& [n, k] : device_kind_choices())
    if (n == name) return k;
  return std::nullopt;
}

std::string device_name(Device device) {
  return device.kind == DeviceKind::kCpu ? std::string("cpu") : fmt::format("cuda:{}", device.index);
}

}  // namespace fk
