// A table of plug-in records by name: the registries of structs that plug-ins fill
// (core/spec/family.h's FamilyRules, runner/model/family.h's ModelFamily). T has a
// std::string `name`. Lookups of a missing name fail with the names there are.
// Not thread-safe for writes: plug-ins are added once, under a std::call_once.
#pragma once

#include "core/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <string>
#include <vector>

namespace fk {

template <typename T>
class NamedRegistry {
 public:
  // `what` names a record in errors: "model family".
  explicit NamedRegistry(std::string what) : what_(std::move(what)) {}

  // Throws kInvalidArgument for an empty name or a name already there.
  void add(T item) {
    if (item.name.empty()) fail(ErrorKind::kInvalidArgument, "{} without a name", what_);
    if (items_.count(item.name) != 0) fail(ErrorKind::kInvalidArgument, "{} '{}' registered twice", what_, item.name);
    std::string name = item.name;
    items_.emplace(std::move(name), std::move(item));
  }
  const T* find(const std::string& name) const {
    auto it = items_.find(name);
    return it == items_.end() ? nullptr : &it->second;
  }
  // Throws kNotFound: "no model family named 'x' (known: a, b)".
  const T& get(const std::string& name) const {
    if (const T* t = find(name)) return *t;
    fail(ErrorKind::kNotFound, "no {} named '{}' (known: {})", what_, name, fmt::join(names(), ", "));
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, _] : items_) out.push_back(name);
    return out;
  }

 private:
  std::string what_;
  std::map<std::string, T> items_;
};

}  // namespace fk
