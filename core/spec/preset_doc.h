// A spec document with presets: the published ("full") values plus named overlays
// ("tiny", ...) that change sizes for small runs. Used for architectures and workloads.
#pragma once

#include "core/spec/diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fk::spec {

template <typename T>
struct PresetDoc {
  std::string file;
  T full;
  SourceMap where;                                // positions of the full values
  std::map<std::string, T> presets;               // resolved, by preset name
  std::map<std::string, SourceMap> preset_where;  // positions, by preset name

  // The value at `preset` ("full" or a preset name); nullopt if there is no such preset.
  std::optional<T> select(const std::string& preset) const {
    if (preset == "full") return full;
    auto it = presets.find(preset);
    if (it == presets.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> preset_names() const {
    std::vector<std::string> names{"full"};
    for (const auto& kv : presets) names.push_back(kv.first);
    return names;
  }
};

}  // namespace fk::spec
