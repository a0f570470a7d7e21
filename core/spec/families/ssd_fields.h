// The fields of a Mamba-2 (SSD) mixer that two sections share: the Mamba family's `ssm:`
// and the transformer's `mamba:` (version 2 of each). Each section's struct names them
// alike (num_heads, head_dim, n_groups, time_step_limit_min, time_step_limit_max); these
// helpers read, check, validate and write them (YAML and JSON) under the section's key,
// so the two keep one rule set. Used by families/mamba.cc and families/mamba_layers.cc.
#pragma once

#include "core/spec/families/mamba.h"
#include "core/spec/json_io.h"
#include "core/spec/yaml_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <string>

namespace fk::spec {

inline constexpr const char* kSsdFields[] = {"num_heads", "head_dim", "n_groups", "time_step_limit_min",
                                             "time_step_limit_max"};

// Reads num_heads and head_dim (required when `required`), n_groups and the dt limits.
template <typename T>
void ssd_fields_read(MapReader& r, T& m, bool required) {
  const Need need = required ? Need::kRequired : Need::kOptional;
  r.integer("num_heads", m.num_heads, need, limits::kSsmHeads);
  r.integer("head_dim", m.head_dim, need, limits::kSsmHeads);
  r.integer("n_groups", m.n_groups, Need::kOptional, limits::kSsmHeads);
  r.number("time_step_limit_min", m.time_step_limit_min, Need::kOptional, limits::kSsmTimeStepLimit);
  r.number("time_step_limit_max", m.time_step_limit_max, Need::kOptional, limits::kSsmTimeStepLimit);
}

// The fields' ranges, named "<key>.<field>".
template <typename T>
bool ssd_fields_check(const ParseContext& ctx, const std::string& key, const T& m) {
  bool ok = ctx.check_range(key + ".num_heads", m.num_heads, limits::kSsmHeads);
  ok &= ctx.check_range(key + ".head_dim", m.head_dim, limits::kSsmHeads);
  ok &= ctx.check_range(key + ".n_groups", m.n_groups, limits::kSsmHeads);
  ok &= ctx.check_range(key + ".time_step_limit_min", m.time_step_limit_min, limits::kSsmTimeStepLimit);
  ok &= ctx.check_range(key + ".time_step_limit_max", m.time_step_limit_max, limits::kSsmTimeStepLimit);
  return ok;
}

// Their rules: num_heads x head_dim is the mixer's `width` (the field `width_field`),
// n_groups divides num_heads, the limits are ordered; `err(field, message)` reports one.
template <typename T, typename Err>
void ssd_fields_validate(const Err& err, const std::string& key, const T& m, int64_t width,
                         const std::string& width_field) {
  if (m.num_heads * m.head_dim != width)
    err(key + ".num_heads",
        fmt::format("num_heads x head_dim ({} x {}) must be {} ({})", m.num_heads, m.head_dim, width_field, width));
  if (m.num_heads % m.n_groups != 0)
    err(key + ".n_groups", fmt::format("n_groups ({}) must divide num_heads ({})", m.n_groups, m.num_heads));
  if (m.time_step_limit_max > 0 && m.time_step_limit_min > m.time_step_limit_max)
    err(key + ".time_step_limit_min", fmt::format("above time_step_limit_max ({})", m.time_step_limit_max));
}

// The fields as YAML map entries.
template <typename T>
void ssd_fields_write(YAML::Emitter& e, const T& m) {
  e << YAML::Key << "num_heads" << YAML::Value << static_cast<long long>(m.num_heads);
  e << YAML::Key << "head_dim" << YAML::Value << static_cast<long long>(m.head_dim);
  e << YAML::Key << "n_groups" << YAML::Value << static_cast<long long>(m.n_groups);
  e << YAML::Key << "time_step_limit_min" << YAML::Value << m.time_step_limit_min;
  e << YAML::Key << "time_step_limit_max" << YAML::Value << m.time_step_limit_max;
}

// Version 2's entries of the section's JSON form (`version` and the fields), and back.
template <typename T>
void ssd_fields_to_json(Json& j, const T& m) {
  j["version"] = m.version;
  j["num_heads"] = m.num_heads;
  j["head_dim"] = m.head_dim;
  j["n_groups"] = m.n_groups;
  j["time_step_limit_min"] = m.time_step_limit_min;
  j["time_step_limit_max"] = m.time_step_limit_max;
}
template <typename T>
void ssd_fields_from_json(const JsonIn& in, T& m) {
  m.version = in.at("version").i64();
  m.num_heads = in.at("num_heads").i64();
  m.head_dim = in.at("head_dim").i64();
  m.n_groups = in.at("n_groups").i64();
  m.time_step_limit_min = in.at("time_step_limit_min").f64();
  m.time_step_limit_max = in.at("time_step_limit_max").f64();
}

}  // namespace fk::spec
