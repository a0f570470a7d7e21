// Checked reading of one HuggingFace config.json object (internal to hf_config*.cc).
//
// Every getter marks its key as read. A key that is absent takes the value the
// transformers config class gives it, and the reader records that (the note goes into
// the spec's `source`), so no default is silent. finish() rejects every key nobody
// read or declared ignorable: an unknown key may change the forward pass. Errors are
// fk::Error (kInvalidArgument) reading "<file>: <field>: found <value>, expected <what>".
#pragma once

#include "core/error.h"
#include "core/spec/limits.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fk::spec::hf {

using Json = nlohmann::json;

// A short rendering of a JSON value for messages (long values are cut).
std::string describe(const Json& v);

class ConfigReader {
 public:
  // `obj` must outlive the reader. `prefix` is prepended to field names in messages
  // ("text_config." for a nested config); `cls` names the transformers class whose
  // defaults fill absent keys ("LlamaConfig").
  ConfigReader(const Json& obj, std::string file, std::string prefix, std::string cls);

  const std::string& file() const { return file_; }
  const std::string& cls() const { return cls_; }
  std::string field(const std::string& key) const { return prefix_ + key; }

  // The value, or nullptr when absent; marks the key as read.
  const Json* get(const std::string& key);
  bool has(const std::string& key) const { return obj_.contains(key); }
  // Present and not null.
  bool has_value(const std::string& key) const { return has(key) && !obj_.at(key).is_null(); }

  // Required: absent or null is an error.
  int64_t integer(const std::string& key, int64_t min = 1) { return integer(key, IntRange{min}); }
  // With the class default when absent (recorded).
  int64_t integer_or(const std::string& key, int64_t def, int64_t min = 1) {
    return integer_or(key, def, IntRange{min});
  }
  // Absent or null -> nullopt.
  std::optional<int64_t> optional_integer(const std::string& key, int64_t min = 1) {
    return optional_integer(key, IntRange{min});
  }
  double number(const std::string& key);
  double number_or(const std::string& key, double def);
  // The same within a range: the spec's limit of the field the key fills
  // (core/spec/limits.h), so that a value the spec cannot hold is an error on the
  // config's key, and a layer count is bounded before anything loops over layers.
  int64_t integer(const std::string& key, IntRange range);
  int64_t integer_or(const std::string& key, int64_t def, IntRange range);
  std::optional<int64_t> optional_integer(const std::string& key, IntRange range);
  double number_or(const std::string& key, double def, RealRange range);
  // Absent -> def (recorded); null -> nullopt.
  std::optional<double> optional_number_or(const std::string& key, std::optional<double> def);
  bool boolean_or(const std::string& key, bool def);
  std::string string_or(const std::string& key, const std::string& def);

  // Keys read and deliberately not used (they do not change the forward pass).
  void ignore(std::initializer_list<const char*> keys);
  // The key, when present, must hold a value that changes nothing: null, false, 0,
  // "", [] or {} (quantization_config, pruned_heads, add_cross_attention, ...).
  void require_inert(const std::string& key, const std::string& why);

  // Records that the absent key took the class default `value` (for the source note).
  void note_default(const std::string& key, const std::string& value);
  const std::vector<std::string>& defaults_used() const { return defaults_; }

  // Errors on the first key that was neither read nor ignored.
  void finish() const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  [[noreturn]] void fail_value(const std::string& key, const Json& found, const std::string& expected) const;

 private:
  int64_t to_integer(const std::string& key, const Json& v, IntRange range) const;
  double to_number(const std::string& key, const Json& v) const;

  const Json& obj_;
  std::string file_, prefix_, cls_;
  std::set<std::string> read_;
  std::vector<std::string> defaults_;
};

// Fails with "<file>: <field>: <message>".
[[noreturn]] void fail_field(const std::string& file, const std::string& field, const std::string& message);

}  // namespace fk::spec::hf
