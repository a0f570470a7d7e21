// Strict, located reading of YAML maps into spec structs.
//
// A MapReader wraps one YAML map. Each typed getter reads one key, checks its type
// and range, records the key's position in the SourceMap, and reports problems to
// the Diagnostics as "file:line:col: path.key: found X, expected Y". finish()
// reports every key nobody asked for, with a "did you mean" hint. In overlay mode
// (presets applied over a base spec) required keys may be absent.
//
// Numbers must be plain YAML scalars: a quoted "32" is a string, not an integer.
#pragma once

#include "core/spec/diagnostics.h"
#include "core/spec/limits.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fk::spec {

struct ParseContext {
  std::string file;
  Diagnostics* diags;
  SourceMap* where;
  // Prepended to field paths in messages (e.g. "presets.tiny" while reading a preset
  // overlay); the SourceMap keeps the plain paths.
  std::string display_prefix;
  std::string display(const std::string& field) const;
  SourcePos pos_of(const YAML::Node& node) const;
  void error(const YAML::Node& at, const std::string& field, std::string message) const;
  void error(SourcePos pos, const std::string& field, std::string message) const;
  // Checks a resolved value against its range (core/spec/limits.h) and reports it as
  // MapReader does, at the field's position in `where`; returns whether it is inside.
  bool check_range(const std::string& field, int64_t value, IntRange range) const;
  bool check_range(const std::string& field, double value, RealRange range) const;
};

enum class Need { kOptional, kRequired };

// A short description of a YAML node for messages: `"abc"` (string), `12`, `a map`...
std::string yaml_describe(const YAML::Node& node);

// Scalar conversions shared by all readers; nullopt when the text is not of that type.
std::optional<int64_t> yaml_to_int(const YAML::Node& node);
std::optional<double> yaml_to_double(const YAML::Node& node);
std::optional<bool> yaml_to_bool(const YAML::Node& node);
bool yaml_is_quoted(const YAML::Node& node);

class MapReader {
 public:
  MapReader(const ParseContext& ctx, const YAML::Node& node, std::string path, bool overlay = false);

  bool valid() const { return valid_; }
  bool overlay() const { return overlay_; }
  const ParseContext& ctx() const { return ctx_; }
  // "prefix.key" (or "key" at the top).
  std::string path(const std::string& key) const;
  // True when the key is present; marks it as known.
  bool has(const std::string& key);
  // The child node (invalid Node if absent); marks the key as known.
  YAML::Node child(const std::string& key);
  SourcePos key_pos(const std::string& key) const;
  // Position of the map itself.
  SourcePos pos() const { return ctx_.pos_of(node_); }

  bool integer(const std::string& key, int64_t& out, Need need,
               int64_t min = std::numeric_limits<int64_t>::min(),
               int64_t max = std::numeric_limits<int64_t>::max());
  // As integer(), but `null` is allowed and resets `out`.
  bool optional_integer(const std::string& key, std::optional<int64_t>& out, Need need, int64_t min,
                        int64_t max = std::numeric_limits<int64_t>::max());
  bool number(const std::string& key, double& out, Need need, double min, double max,
              bool min_exclusive = false);
  bool optional_number(const std::string& key, std::optional<double>& out, Need need, double min,
                       double max, bool min_exclusive = false);
  // The same, with a range from core/spec/limits.h.
  bool integer(const std::string& key, int64_t& out, Need need, IntRange range) {
    return integer(key, out, need, range.min, range.max);
  }
  bool optional_integer(const std::string& key, std::optional<int64_t>& out, Need need, IntRange range) {
    return optional_integer(key, out, need, range.min, range.max);
  }
  bool number(const std::string& key, double& out, Need need, RealRange range) {
    return number(key, out, need, range.min, range.max, range.min_exclusive);
  }
  bool optional_number(const std::string& key, std::optional<double>& out, Need need, RealRange range) {
    return optional_number(key, out, need, range.min, range.max, range.min_exclusive);
  }
  bool boolean(const std::string& key, bool& out, Need need);
  bool string(const std::string& key, std::string& out, Need need);
  // A list of strings (a scalar is not accepted).
  bool string_list(const std::string& key, std::vector<std::string>& out, Need need);
  // A list of integers, each in [min, max] (a scalar is not accepted; [] is).
  bool integer_list(const std::string& key, std::vector<int64_t>& out, Need need, int64_t min, int64_t max);
  bool integer_list(const std::string& key, std::vector<int64_t>& out, Need need, IntRange range) {
    return integer_list(key, out, need, range.min, range.max);
  }

  // One of `options` (name -> value).
  template <typename E>
  bool choice(const std::string& key, E& out, Need need,
              const std::vector<std::pair<std::string, E>>& options) {
    std::string text;
    if (!string(key, text, need)) return false;
    for (const auto& [name, value] : options) {
      if (name == text) {
        out = value;
        return true;
      }
    }
    std::vector<std::string> names;
    for (const auto& o : options) names.push_back(o.first);
    report_bad_choice(key, text, names);
    return false;
  }

  // Reports keys that no getter asked for. Call once, after all getters.
  void finish();

 private:
  // The scalar node for `key`, or an invalid node (absent, or wrong kind: reported).
  YAML::Node scalar(const std::string& key, Need need, const char* expected);
  void report_bad_choice(const std::string& key, const std::string& found,
                         const std::vector<std::string>& names);

  ParseContext ctx_;
  YAML::Node node_;
  std::string path_;
  bool overlay_;
  bool valid_ = false;
  std::set<std::string> known_;
};

// Loads a YAML document; reports syntax errors (with position) and I/O errors.
std::optional<YAML::Node> yaml_load_file(const std::string& file, Diagnostics& diags);
std::optional<YAML::Node> yaml_load_string(const std::string& text, const std::string& file,
                                           Diagnostics& diags);

}  // namespace fk::spec
