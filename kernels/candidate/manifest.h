// Candidate folders: a kernel.yaml manifest plus sources (docs/writing-kernels.md).
//
// candidate_manifest_load() reads and validates the manifest: the op must exist in
// the operator registry, sources must exist inside the folder with an extension the
// backend compiles, the entry must be a C identifier, dtypes must be float types the
// op takes, and extra flags must come from the backend's allow-list. Problems are
// reported as file:line:column diagnostics like every spec.
#pragma once

#include "core/device.h"
#include "core/dtype.h"
#include "core/spec/diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace fk::kernels {

struct CandidateManifest {
  std::string folder;        // absolute, normalised
  std::string name;          // defaults to the folder's name
  std::string op;
  DeviceKind backend = DeviceKind::kCpu;
  std::vector<std::string> sources;  // relative to folder
  std::string entry;
  std::vector<DType> dtypes;
  std::vector<std::string> flags;
  std::string description;
  std::string expect;         // zoo only: the verdict tests expect
  std::string expect_reason;  // zoo only: a substring of the expected reason
  std::string expect_workload;       // zoo only: the workload its test checks it on (default prefill-512)
  std::string expect_arch;           // zoo only: the architecture its test checks it on (default llama-32-layers)
  double expect_speedup_below = 0;   // zoo only: its kernel speedup must stay below this (0: not checked)
  std::string expect_sanitized;         // zoo only: the verdict under `fk check --sanitize` ("" : not tested)
  std::string expect_sanitized_reason;  // zoo only: a substring of that verdict's reason
  bool handles(DType d) const;
};

// The allowed extra flags of a backend: exact flags, or prefixes ending in '='
// ("-D" takes any macro).
bool candidate_flag_allowed(DeviceKind backend, const std::string& flag);

std::optional<CandidateManifest> candidate_manifest_load(const std::string& folder, spec::Diagnostics& diags);

}  // namespace fk::kernels
