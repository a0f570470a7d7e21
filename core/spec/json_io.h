// JSON forms of the spec values, used in job files (fk plan --emit) and HDF5
// attributes. Writing is canonical (sorted keys, all fields), so the text of a value
// is stable and can be hashed into ids. Reading checks every field's type, then runs
// the spec loader's own validation of the value (architecture_validate,
// workload_validate, layout_validate and the limits of core/spec/limits.h), so a JSON
// value meets exactly the rules of a spec file; it throws fk::Error naming the JSON
// path ("/jobs/3/architecture/hidden_size: ...").
#pragma once

#include "core/spec/campaign.h"
#include "core/spec/limits.h"

#include <nlohmann/json.hpp>

namespace fk::spec {

using Json = nlohmann::json;

Json to_json(const Architecture& a);
Json to_json(const Workload& w);
Json to_json(const Layout& l);
Json to_json(const CandidateSet& c);
Json to_json(const KernelStageSpec& k);
Json to_json(const ModelStageSpec& m);

// Readers: `path` is the JSON pointer of `j` for messages.
Architecture architecture_from_json(const Json& j, const std::string& path);
Workload workload_from_json(const Json& j, const std::string& path);
Layout layout_from_json(const Json& j, const std::string& path);
CandidateSet candidate_set_from_json(const Json& j, const std::string& path);
KernelStageSpec kernel_stage_from_json(const Json& j, const std::string& path);
ModelStageSpec model_stage_from_json(const Json& j, const std::string& path);

// Checked access used by the readers above and by other JSON formats.
class JsonIn {
 public:
  JsonIn(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}
  const Json& json() const { return j_; }
  const std::string& path() const { return path_; }
  bool has(const char* key) const;
  JsonIn at(const char* key) const;  // required key
  JsonIn at(size_t index) const;
  size_t size() const;               // of an array
  int64_t i64(int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
  int64_t i64(IntRange range) const { return i64(range.min, range.max); }
  double f64() const;
  double f64(RealRange range) const;
  bool boolean() const;
  std::string str() const;
  bool is_null() const { return j_.is_null(); }
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const Json& j_;
  std::string path_;
};

}  // namespace fk::spec
