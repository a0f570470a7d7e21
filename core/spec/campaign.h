// Campaigns: architectures x layouts x workloads x candidate sets, at one scale.
//
// A campaign names architectures and workloads by file name (looked up in the specs
// folder: <specs_dir>/architectures/<name>.yaml, <specs_dir>/workloads/<name>.yaml),
// by path (relative to the campaign file), or writes workloads inline. Resolution
// loads and validates every referenced file; errors in a referenced file name that
// file, errors in a reference name the campaign's line.
#pragma once

#include "core/device.h"
#include "core/spec/architecture_load.h"
#include "core/spec/memory.h"
#include "core/spec/workload.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fk::spec {

enum class UnfitPolicy { kError, kSkip };

// Ops of one candidate set: op name -> candidate folder (absolute or relative to the
// campaign file). The empty set is the baseline.
struct CandidateSet {
  std::string name;
  std::map<std::string, std::string> ops;
};

struct KernelStageSpec {
  bool enabled = true;
  int64_t warmup = 3;
  int64_t iterations = 20;
  int64_t rounds = 3;  // fresh random inputs per round (correctness)
  double instance_time_limit_s = 60;  // a candidate's checks of one op instance (TIMEOUT beyond)
  // A compute-sanitizer tool ("memcheck", ...) that device candidates' workers run
  // under, untimed (kernels/candidate/sanitizer.h); "" : none.
  std::string sanitize;
};

// The compute-sanitizer tools `kernel_stage.sanitize` (and `fk check --sanitize`) take.
const std::vector<std::string>& sanitizer_tools();
bool sanitizer_tool_known(const std::string& tool);

struct ModelStageSpec {
  bool enabled = true;
  int64_t iterations = 3;  // timed repetitions of prefill + decode
  // After the first iteration, decode steps run as captured device graphs where the
  // backend, the model family and the job allow it (runner/model_stage.h); false: eager.
  bool graphs = true;
  // Where the fp32 reference run keeps its weights (core/spec/memory.h).
  ReferenceWeights reference = ReferenceWeights::kAuto;
};

struct SlurmSpec {
  std::string partition;
  std::string account;
  std::string qos;
  int64_t nodes = 1;
  int64_t gpus_per_node = 0;
  std::vector<std::string> sbatch_args;
};

struct ExecutorSpec {
  std::string kind = "local";  // local | slurm
  int64_t slots = 0;           // ranks that may run at once per node; 0 = detect
  double time_limit_s = 600;   // per job
  int64_t retries = 2;
  double heartbeat_timeout_s = 120;
  SlurmSpec slurm;
};

struct ArchitectureRef {
  std::string text;  // as written
  SourcePos pos;
  ArchitectureDoc doc;
};

struct WorkloadRef {
  std::string text;
  SourcePos pos;
  WorkloadDoc doc;
};

struct LayoutRef {
  Layout layout;
  SourcePos pos;
};

struct Campaign {
  std::string file;
  std::string name;
  std::string description;
  std::string scale = "full";
  DeviceKind backend = DeviceKind::kCpu;
  uint64_t seed = 0;
  int64_t repetitions = 1;
  std::string specs_dir;
  UnfitPolicy unfit_layouts = UnfitPolicy::kError;
  std::vector<ArchitectureRef> architectures;
  std::vector<WorkloadRef> workloads;
  std::vector<LayoutRef> layouts;
  std::vector<CandidateSet> candidate_sets;
  KernelStageSpec kernel_stage;
  ModelStageSpec model_stage;
  ExecutorSpec executor;
};

// Parses a campaign and resolves (loads and validates) everything it references.
std::optional<Campaign> campaign_parse(const YAML::Node& root, const std::string& file, Diagnostics& diags);

// Parses durations: 90 (seconds), "90s", "10m", "1h30m", "2h". Never throws: a value
// too large for a double is +inf. Readers reject values outside limits::kDuration
// (at most one year) with the message duration_too_long() makes.
std::optional<double> duration_parse(const std::string& text);
// "found <found>, expected a duration of at most one year (31536000 s)".
std::string duration_too_long(const std::string& found);

}  // namespace fk::spec
