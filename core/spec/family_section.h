// Sections of an architecture that belong to one model family (Mamba's `ssm:`, the
// next family's own): Architecture keeps their values in `sections`, keyed by the
// section's top-level key, as values of the family's own struct; the family's
// SectionCodec (core/spec/family.h) reads, checks, writes and serialises them. So a new
// family's section is a struct and a codec in the family's own files: the architecture
// struct, its YAML reader and writer, its JSON form and the limits stay as they are.
//
// A section struct T names its key, `static constexpr const char* kKey = "ssm";`, and
// has operator== (job files share one entry among equal architectures).
#pragma once

#include "core/error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fk::spec {

class SectionValue {
 public:
  virtual ~SectionValue() = default;
  virtual bool equals(const SectionValue& other) const = 0;
  virtual std::shared_ptr<SectionValue> clone() const = 0;
};

template <typename T>
class SectionOf final : public SectionValue {
 public:
  explicit SectionOf(T v) : value(std::move(v)) {}
  bool equals(const SectionValue& other) const override {
    const auto* o = dynamic_cast<const SectionOf<T>*>(&other);
    return o != nullptr && o->value == value;
  }
  std::shared_ptr<SectionValue> clone() const override { return std::make_shared<SectionOf<T>>(value); }
  T value;
};

class FamilySections {
 public:
  // The section of type T, or nullptr when the architecture has none (or one of
  // another type under T's key).
  template <typename T>
  const T* find() const {
    const auto it = values_.find(T::kKey);
    if (it == values_.end()) return nullptr;
    const auto* v = dynamic_cast<const SectionOf<T>*>(it->second.get());
    return v == nullptr ? nullptr : &v->value;
  }
  // The section of type T; a validated architecture of the family has its required
  // sections, so a missing one is a bug (kInternal).
  template <typename T>
  const T& get() const {
    const T* v = find<T>();
    if (v == nullptr) fail(ErrorKind::kInternal, "the architecture has no '{}' section", T::kKey);
    return *v;
  }
  // The section to change, created with T's defaults when missing. Copies of an
  // Architecture share section values; editing one copies it first, so the others
  // keep theirs. The reference holds until the next edit of this key.
  template <typename T>
  T& edit() {
    auto& slot = values_[T::kKey];
    std::shared_ptr<SectionValue> fresh;
    if (slot != nullptr && dynamic_cast<const SectionOf<T>*>(slot.get()) != nullptr)
      fresh = slot->clone();
    else
      fresh = std::make_shared<SectionOf<T>>(T{});
    slot = fresh;
    return static_cast<SectionOf<T>&>(*fresh).value;
  }
  template <typename T>
  void set(T value) {
    values_[T::kKey] = std::make_shared<SectionOf<T>>(std::move(value));
  }
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  void erase(const std::string& key) { values_.erase(key); }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : values_) out.push_back(k);
    return out;
  }
  bool empty() const { return values_.empty(); }

  bool operator==(const FamilySections& o) const {
    if (values_.size() != o.values_.size()) return false;
    for (auto a = values_.begin(), b = o.values_.begin(); a != values_.end(); ++a, ++b)
      if (a->first != b->first || !a->second->equals(*b->second)) return false;
    return true;
  }

 private:
  std::map<std::string, std::shared_ptr<SectionValue>> values_;
};

}  // namespace fk::spec
