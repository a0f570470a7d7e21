// Helpers for spec tests: a temporary specs tree, and parsing text as a spec.
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/spec_file.h"
#include "core/spec/workload.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fk::testing {

// A fresh folder under the system temp dir with architectures/, workloads/ and
// campaigns/ subfolders; removed with the object.
class TempSpecs {
 public:
  TempSpecs();
  ~TempSpecs();
  TempSpecs(const TempSpecs&) = delete;
  TempSpecs& operator=(const TempSpecs&) = delete;
  const std::string& root() const { return root_; }
  // Writes `text` to root/relative and returns the full path.
  std::string write(const std::string& relative, const std::string& text) const;

 private:
  std::string root_;
};

// A valid architecture spec (a small GQA model with a tiny preset), line by line so
// tests can replace one line and know where the error must point.
std::string base_architecture_yaml();
// Replaces the first line that starts with `prefix` (after indentation) by `line`
// (keeping the indentation); fails the test if no line matches.
std::string replace_line(const std::string& text, const std::string& prefix, const std::string& line);
// The 1-based line number of the first line starting with `prefix` (after indentation).
int line_of(const std::string& text, const std::string& prefix);

// Parses `text` as a spec file named `name`; returns the diagnostics.
spec::Diagnostics parse_errors(const std::string& text, const std::string& name = "test.yaml");
// The diagnostics of loading `text` as a spec file named `name`, as text ("" when it
// loaded).
std::string load_errors(const std::string& text, const std::string& name = "test.yaml");

// The text of the shipped specs/architectures/<name>.yaml; fails the test if missing.
std::string shipped_architecture_text(const std::string& name);
// The shipped architecture spec `name`, loaded (throws, naming the errors, when it does not load).
spec::ArchitectureDoc shipped_architecture(const std::string& name);
// `text` with the first occurrence of `from` replaced by `to`; fails the test (and
// returns `text` unchanged) if `from` does not occur.
std::string replaced(std::string text, const std::string& from, const std::string& to);

// `a` written as YAML (returned) loads back equal to `a`.
std::string expect_round_trip(const spec::Architecture& a);
// A workload named "w" of `batch` sequences of `seq_len` tokens.
spec::Workload test_workload(int64_t batch, int64_t seq_len);

// The message of importing `config` (an HF config.json) as `file`, which is expected to
// fail with kInvalidArgument; "" when it imported.
std::string hf_import_error(const nlohmann::json& config, const std::string& file = "t/config.json");
// One bad value of an HF config key, and a part of the message it must give.
struct BadHfKey {
  const char* key;
  nlohmann::json value;
  const char* expect;
};
// For each case: `base` with key set to value fails to import as `file`, and the message
// names the key and holds `expect`.
void expect_hf_import_errors(const nlohmann::json& base, const std::vector<BadHfKey>& cases,
                             const std::string& file = "t/config.json");
// Expects `got` (an import) to describe the model `want` (a shipped spec's full values):
// the sizes, every family section, attention (an explicit all-full layer pattern equals
// none), position, norm, MLP, MoE, head and embedding.
void expect_same_model(const spec::Architecture& got, const spec::Architecture& want);

}  // namespace fk::testing
