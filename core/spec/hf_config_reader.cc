#include "core/spec/hf_config_reader.h"

#include "core/spec/architecture_write.h"
#include "core/spec/diagnostics.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace fk::spec::hf {

std::string describe(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

void fail_field(const std::string& file, const std::string& field, const std::string& message) {
  throw Error(ErrorKind::kInvalidArgument, fmt::format("{}: {}: {}", file, field, message));
}

ConfigReader::ConfigReader(const Json& obj, std::string file, std::string prefix, std::string cls)
    : obj_(obj), file_(std::move(file)), prefix_(std::move(prefix)), cls_(std::move(cls)) {
  if (!obj_.is_object())
    fail_field(file_, prefix_.empty() ? "(top level)" : prefix_.substr(0, prefix_.size() - 1),
               fmt::format("found {}, expected a JSON object", describe(obj_)));
}

void ConfigReader::fail(const std::string& key, const std::string& message) const {
  fail_field(file_, field(key), message);
}

void ConfigReader::fail_value(const std::string& key, const Json& found, const std::string& expected) const {
  fail(key, fmt::format("found {}, expected {}", describe(found), expected));
}

const Json* ConfigReader::get(const std::string& key) {
  read_.insert(key);
  auto it = obj_.find(key);
  return it == obj_.end() ? nullptr : &*it;
}

int64_t ConfigReader::to_integer(const std::string& key, const Json& v, IntRange range) const {
  int64_t out = 0;
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    fail_value(key, v, range.describe());
  } else if (v.is_number_integer()) {
    out = v.get<int64_t>();
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>()) &&
             std::abs(v.get<double>()) < 9e15) {
    out = static_cast<int64_t>(v.get<double>());
  } else {
    fail_value(key, v, range.min >= 0 ? range.describe() : "an integer");
  }
  if (!range.contains(out)) fail_value(key, v, range.describe());
  return out;
}

double ConfigReader::to_number(const std::string& key, const Json& v) const {
  if (!v.is_number() || !std::isfinite(v.get<double>())) fail_value(key, v, "a number");
  return v.get<double>();
}

int64_t ConfigReader::integer(const std::string& key, IntRange range) {
  const Json* v = get(key);
  if (v == nullptr) fail(key, fmt::format("missing, expected {} (required)", range.describe()));
  if (v->is_null()) fail_value(key, *v, fmt::format("{} (required)", range.describe()));
  return to_integer(key, *v, range);
}

int64_t ConfigReader::integer_or(const std::string& key, int64_t def, IntRange range) {
  const Json* v = get(key);
  if (v == nullptr) {
    note_default(key, std::to_string(def));
    return def;
  }
  return to_integer(key, *v, range);
}

std::optional<int64_t> ConfigReader::optional_integer(const std::string& key, IntRange range) {
  const Json* v = get(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return to_integer(key, *v, range);
}

double ConfigReader::number(const std::string& key) {
  const Json* v = get(key);
  if (v == nullptr) fail(key, "missing, expected a number (required)");
  return to_number(key, *v);
}

double ConfigReader::number_or(const std::string& key, double def) {
  const Json* v = get(key);
  if (v == nullptr) {
    note_default(key, yaml_float_text(def));
    return def;
  }
  return to_number(key, *v);
}

double ConfigReader::number_or(const std::string& key, double def, RealRange range) {
  const double x = number_or(key, def);
  if (!range.contains(x)) {
    const Json* v = get(key);
    fail_value(key, v != nullptr ? *v : Json(def), range.describe());
  }
  return x;
}

std::optional<double> ConfigReader::optional_number_or(const std::string& key, std::optional<double> def) {
  const Json* v = get(key);
  if (v == nullptr) {
    note_default(key, def ? yaml_float_text(*def) : "null");
    return def;
  }
  if (v->is_null()) return std::nullopt;
  return to_number(key, *v);
}

bool ConfigReader::boolean_or(const std::string& key, bool def) {
  const Json* v = get(key);
  if (v == nullptr) {
    note_default(key, def ? "true" : "false");
    return def;
  }
  if (!v->is_boolean()) fail_value(key, *v, "true or false");
  return v->get<bool>();
}

std::string ConfigReader::string_or(const std::string& key, const std::string& def) {
  const Json* v = get(key);
  if (v == nullptr) {
    note_default(key, def);
    return def;
  }
  if (!v->is_string()) fail_value(key, *v, "a string");
  return v->get<std::string>();
}

void ConfigReader::ignore(std::initializer_list<const char*> keys) {
  for (const char* k : keys) read_.insert(k);
}

void ConfigReader::require_inert(const std::string& key, const std::string& why) {
  const Json* v = get(key);
  if (v == nullptr) return;
  const bool inert = v->is_null() || (v->is_boolean() && !v->get<bool>()) ||
                     (v->is_number() && v->get<double>() == 0.0) || (v->is_string() && v->get<std::string>().empty()) ||
                     (v->is_array() && v->empty()) || (v->is_object() && v->empty());
  if (!inert) fail_value(key, *v, fmt::format("null, false or empty ({})", why));
}

void ConfigReader::note_default(const std::string& key, const std::string& value) {
  defaults_.push_back(fmt::format("{}={}", field(key), value));
}

void ConfigReader::finish() const {
  std::vector<std::string> known(read_.begin(), read_.end());
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    const std::string& key = it.key();
    if (read_.count(key)) continue;
    // Leading-underscore keys are transformers' private bookkeeping (_name_or_path,
    // _commit_hash, _attn_implementation_autoset, ...), never model math.
    if (!key.empty() && key[0] == '_') continue;
    const std::string hint = closest_match(key, known);
    fail(key, fmt::format("found {}, expected no such key: fk import-hf does not know it for {} and it may "
                          "change the forward pass{}",
                          describe(it.value()), cls_, hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
  }
}

}  // namespace fk::spec::hf
