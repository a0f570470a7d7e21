#include "core/spec/yaml_reader.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>

namespace fk::spec {

SourcePos ParseContext::pos_of(const YAML::Node& node) const {
  if (!node.IsDefined()) return SourcePos{file, 0, 0};
  const YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0) return SourcePos{file, 0, 0};
  return SourcePos{file, m.line + 1, m.column + 1};
}

std::string ParseContext::display(const std::string& field) const {
  if (display_prefix.empty()) return field;
  if (field.empty()) return display_prefix;
  return display_prefix + "." + field;
}

void ParseContext::error(const YAML::Node& at, const std::string& field, std::string message) const {
  diags->error(pos_of(at), display(field), std::move(message));
}

void ParseContext::error(SourcePos pos, const std::string& field, std::string message) const {
  diags->error(std::move(pos), display(field), std::move(message));
}

bool ParseContext::check_range(const std::string& field, int64_t value, IntRange range) const {
  if (range.contains(value)) return true;
  error(where->at(field), field, fmt::format("{} is out of range, expected {}", value, range.describe()));
  return false;
}

bool ParseContext::check_range(const std::string& field, double value, RealRange range) const {
  if (range.contains(value)) return true;
  error(where->at(field), field, fmt::format("{} is out of range, expected {}", value, range.describe()));
  return false;
}

bool yaml_is_quoted(const YAML::Node& node) { return node.IsScalar() && node.Tag() == "!"; }

std::string yaml_describe(const YAML::Node& node) {
  if (!node.IsDefined()) return "nothing";
  if (node.IsNull()) return "null";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  std::string text = node.Scalar();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  if (yaml_is_quoted(node)) return fmt::format("the string \"{}\"", text);
  return fmt::format("'{}'", text);
}

std::optional<int64_t> yaml_to_int(const YAML::Node& node) {
  if (!node.IsScalar() || yaml_is_quoted(node)) return std::nullopt;
  const std::string& s = node.Scalar();
  int64_t value = 0;
  const char* begin = s.data();
  if (!s.empty() && s[0] == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || begin == s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<double> yaml_to_double(const YAML::Node& node) {
  if (!node.IsScalar() || yaml_is_quoted(node)) return std::nullopt;
  const std::string& s = node.Scalar();
  if (s.empty()) return std::nullopt;
  // Reject hex floats, inf and nan spellings: specs hold finite decimal numbers.
  for (char c : s) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' ||
          c == '-'))
      return std::nullopt;
  }
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> yaml_to_bool(const YAML::Node& node) {
  if (!node.IsScalar() || yaml_is_quoted(node)) return std::nullopt;
  const std::string& s = node.Scalar();
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

MapReader::MapReader(const ParseContext& ctx, const YAML::Node& node, std::string path, bool overlay)
    : ctx_(ctx), node_(node), path_(std::move(path)), overlay_(overlay) {
  if (!node.IsDefined() || node.IsNull()) {
    ctx_.error(node, path_, "expected a map, found nothing");
    return;
  }
  if (!node.IsMap()) {
    ctx_.error(node, path_, fmt::format("expected a map, found {}", yaml_describe(node)));
    return;
  }
  valid_ = true;
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: it->first is a temporary
    if (!k.IsScalar()) {
      ctx_.error(k, path_, fmt::format("map keys must be names, found {}", yaml_describe(k)));
      continue;
    }
    const std::string key = k.Scalar();
    if (!seen.insert(key).second) ctx_.error(k, this->path(key), "duplicate key");
    ctx_.where->set(this->path(key), ctx_.pos_of(k));
  }
}

std::string MapReader::path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool MapReader::has(const std::string& key) {
  if (!valid_) return false;
  known_.insert(key);
  const YAML::Node& cn = node_;  // const access: operator[] must not insert the key
  return cn[key].IsDefined();
}

YAML::Node MapReader::child(const std::string& key) {
  if (!valid_) return YAML::Node(YAML::NodeType::Undefined);
  known_.insert(key);
  const YAML::Node& cn = node_;
  return cn[key];
}

SourcePos MapReader::key_pos(const std::string& key) const { return ctx_.where->at(path(key)); }

YAML::Node MapReader::scalar(const std::string& key, Need need, const char* expected) {
  YAML::Node v = child(key);
  if (!valid_) return YAML::Node(YAML::NodeType::Undefined);
  if (!v.IsDefined()) {
    if (need == Need::kRequired && !overlay_)
      ctx_.error(ctx_.pos_of(node_), path(key), fmt::format("required field is missing ({})", expected));
    return YAML::Node(YAML::NodeType::Undefined);
  }
  if (!v.IsScalar() && !v.IsNull()) {
    ctx_.error(key_pos(key), path(key), fmt::format("found {}, expected {}", yaml_describe(v), expected));
    return YAML::Node(YAML::NodeType::Undefined);
  }
  return v;
}

bool MapReader::integer(const std::string& key, int64_t& out, Need need, int64_t min, int64_t max) {
  YAML::Node v = scalar(key, need, "an integer");
  if (!v.IsDefined()) return false;
  const auto parsed = yaml_to_int(v);
  if (!parsed) {
    ctx_.error(key_pos(key), path(key), fmt::format("found {}, expected an integer", yaml_describe(v)));
    return false;
  }
  if (const IntRange range{min, max}; !range.contains(*parsed)) {
    ctx_.error(key_pos(key), path(key), fmt::format("{} is out of range, expected {}", *parsed, range.describe()));
    return false;
  }
  out = *parsed;
  return true;
}

bool MapReader::optional_integer(const std::string& key, std::optional<int64_t>& out, Need need,
                                 int64_t min, int64_t max) {
  YAML::Node v = child(key);
  if (v.IsDefined() && v.IsNull()) {
    out.reset();
    return true;
  }
  int64_t value = 0;
  if (!integer(key, value, need, min, max)) return false;
  out = value;
  return true;
}

bool MapReader::number(const std::string& key, double& out, Need need, double min, double max,
                       bool min_exclusive) {
  YAML::Node v = scalar(key, need, "a number");
  if (!v.IsDefined()) return false;
  const auto parsed = yaml_to_double(v);
  if (!parsed) {
    ctx_.error(key_pos(key), path(key), fmt::format("found {}, expected a number", yaml_describe(v)));
    return false;
  }
  if (const RealRange range{min, max, min_exclusive}; !range.contains(*parsed)) {
    ctx_.error(key_pos(key), path(key), fmt::format("{} is out of range, expected {}", v.Scalar(), range.describe()));
    return false;
  }
  out = *parsed;
  return true;
}

bool MapReader::optional_number(const std::string& key, std::optional<double>& out, Need need,
                                double min, double max, bool min_exclusive) {
  YAML::Node v = child(key);
  if (v.IsDefined() && v.IsNull()) {
    out.reset();
    return true;
  }
  double value = 0;
  if (!number(key, value, need, min, max, min_exclusive)) return false;
  out = value;
  return true;
}

bool MapReader::boolean(const std::string& key, bool& out, Need need) {
  YAML::Node v = scalar(key, need, "true or false");
  if (!v.IsDefined()) return false;
  const auto parsed = yaml_to_bool(v);
  if (!parsed) {
    ctx_.error(key_pos(key), path(key), fmt::format("found {}, expected true or false", yaml_describe(v)));
    return false;
  }
  out = *parsed;
  return true;
}

bool MapReader::string(const std::string& key, std::string& out, Need need) {
  YAML::Node v = scalar(key, need, "a string");
  if (!v.IsDefined()) return false;
  if (v.IsNull()) {
    ctx_.error(key_pos(key), path(key), "found null, expected a string");
    return false;
  }
  out = v.Scalar();
  return true;
}

bool MapReader::string_list(const std::string& key, std::vector<std::string>& out, Need need) {
  YAML::Node v = child(key);
  if (!valid_) return false;
  if (!v.IsDefined()) {
    if (need == Need::kRequired && !overlay_)
      ctx_.error(ctx_.pos_of(node_), path(key), "required field is missing (a list of names)");
    return false;
  }
  if (!v.IsSequence()) {
    ctx_.error(key_pos(key), path(key), fmt::format("found {}, expected a list of names", yaml_describe(v)));
    return false;
  }
  std::vector<std::string> items;
  bool ok = true;
  for (size_t i = 0; i < v.size(); ++i) {
    const YAML::Node item = v[i];
    if (!item.IsScalar()) {
      ctx_.error(item, fmt::format("{}[{}]", path(key), i),
                 fmt::format("found {}, expected a name", yaml_describe(item)));
      ok = false;
      continue;
    }
    items.push_back(item.Scalar());
  }
  if (!ok) return false;
  out = std::move(items);
  return true;
}

bool MapReader::integer_list(const std::string& key, std::vector<int64_t>& out, Need need, int64_t min,
                             int64_t max) {
  YAML::Node v = child(key);
  if (!valid_) return false;
  if (!v.IsDefined()) {
    if (need == Need::kRequired && !overlay_)
      ctx_.error(ctx_.pos_of(node_), path(key), "required field is missing (a list of integers)");
    return false;
  }
  if (!v.IsSequence()) {
    ctx_.error(key_pos(key), path(key), fmt::format("found {}, expected a list of integers", yaml_describe(v)));
    return false;
  }
  std::vector<int64_t> items;
  bool ok = true;
  for (size_t i = 0; i < v.size(); ++i) {
    const YAML::Node item = v[i];
    const auto parsed = yaml_to_int(item);
    if (!parsed) {
      ctx_.error(item, fmt::format("{}[{}]", path(key), i),
                 fmt::format("found {}, expected an integer", yaml_describe(item)));
      ok = false;
    } else if (const IntRange range{min, max}; !range.contains(*parsed)) {
      ctx_.error(item, fmt::format("{}[{}]", path(key), i),
                 fmt::format("{} is out of range, expected {}", *parsed, range.describe()));
      ok = false;
    } else {
      items.push_back(*parsed);
    }
  }
  if (!ok) return false;
  out = std::move(items);
  return true;
}

void MapReader::report_bad_choice(const std::string& key, const std::string& found,
                                  const std::vector<std::string>& names) {
  std::string hint = closest_match(found, names);
  ctx_.error(key_pos(key), path(key),
             fmt::format("'{}' is not one of [{}]{}", found, fmt::join(names, ", "),
                         hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
}

void MapReader::finish() {
  if (!valid_) return;
  std::vector<std::string> known(known_.begin(), known_.end());
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string key = it->first.Scalar();
    if (known_.count(key)) continue;
    const std::string hint = closest_match(key, known);
    ctx_.error(ctx_.pos_of(it->first), path(key),
               hint.empty() ? std::string("unknown field")
                            : fmt::format("unknown field; did you mean '{}'?", hint));
  }
}

std::optional<YAML::Node> yaml_load_string(const std::string& text, const std::string& file,
                                           Diagnostics& diags) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    SourcePos pos{file, 0, 0};
    if (!e.mark.is_null() && e.mark.line >= 0) pos = {file, e.mark.line + 1, e.mark.column + 1};
    diags.error(pos, "", fmt::format("YAML syntax error: {}", e.msg));
  } catch (const std::exception& e) {
    diags.error({file, 0, 0}, "", fmt::format("cannot parse YAML: {}", e.what()));
  }
  return std::nullopt;
}

std::optional<YAML::Node> yaml_load_file(const std::string& file, Diagnostics& diags) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    diags.error({file, 0, 0}, "", fmt::format("cannot open file: {}", std::strerror(errno)));
    return std::nullopt;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return yaml_load_string(buffer.str(), file, diags);
}

}  // namespace fk::spec
