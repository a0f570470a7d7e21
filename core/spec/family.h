// Model families, spec side: what a family contributes to planning — which layouts
// cannot run it, and how much memory a rank needs — without building anything. Each
// family is a plug-in that fills a FamilyRules (like kernels::OpDef) and is listed in
// register_builtin_families(); an architecture names its family in `model_family`
// (docs/specs.md). The runner side of a family (building the model, its step plan,
// its weights) is runner/model/family.h, keyed by the same name.
//
// `model_family` is not `family`: `family` is the lineage reports group scores by
// (llama, mistral, qwen3, ...); `model_family` picks the code that runs the model.
#pragma once

#include "core/named_registry.h"
#include "core/spec/architecture.h"
#include "core/spec/memory.h"
#include "core/spec/workload.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>

#include <string>
#include <string_view>
#include <vector>

namespace YAML {
class Emitter;
}

namespace fk::spec {

struct ParseContext;  // core/spec/yaml_reader.h
class MapReader;      // core/spec/yaml_reader.h
class JsonIn;         // core/spec/json_io.h

// A model field an architecture of the family takes, beyond the ones every family
// takes (identity, dtype, hidden_size, num_hidden_layers, vocab_size and the norm,
// embedding and head sections): a top-level key of the architecture file.
struct FamilyField {
  std::string key;
  bool required = false;
};

// The 8 categories of the public FastKernels benchmark's 46 architectures (arXiv
// 2605.23215, shared/reference/fastkernels-46.md), in its order.
enum class FastKernelsCategory {
  kDenseMoeLlm,        // Dense & MoE LLMs
  kLinearAttentionSsm, // Linear attention & SSM
  kVisionVideoAudio,   // Vision / video / audio
  kMultimodalEncoder,  // Multimodal & encoders
  kEdgeDetection,      // Edge & detection
  kScience3dRobotics,  // 3D / robotics / science
  kRecsysSpecialized,  // Recsys & specialized
  kWorldModel,         // World models
};
// Every category, in the benchmark's order, and each one's name as the paper writes it.
const std::vector<FastKernelsCategory>& fastkernels_categories();
std::string_view fastkernels_category_name(FastKernelsCategory c);

// The images a model takes in place of token ids: [batch, channels, size, size] pixels.
struct ImageInput {
  int64_t channels = 0, size = 0;
};

// A section only this family takes (core/spec/family_section.h): a top-level map of the
// architecture file whose values live in Architecture::sections. Every function is
// required; the loader, writers, JSON form and limit checks call them for the
// architecture's family, so nothing outside the family's files names the section.
struct SectionCodec {
  std::string key;  // the top-level key, e.g. "ssm"
  bool required = false;
  // Reads the section's map into a.sections (types and ranges through `r`, which
  // reports them at file:line; in a preset, r.overlay() is true and only the keys
  // written change the full model's values).
  void (*read)(MapReader& r, Architecture& a) = nullptr;
  // The section's values against their limits, for values from any source (HF import,
  // JSON): each error through ctx at its field ("ssm.state_size"). False on an error.
  // Called only when a.sections has the key.
  bool (*check_limits)(const Architecture& a, const ParseContext& ctx) = nullptr;
  // Writes `key: {...}` into the architecture file's map (called when a has it).
  void (*write_yaml)(YAML::Emitter& e, const Architecture& a) = nullptr;
  // The section's JSON form (canonical: every field) and its reader (types; ranges
  // are checked by check_limits afterwards).
  nlohmann::json (*to_json)(const Architecture& a) = nullptr;
  void (*from_json)(const JsonIn& in, Architecture& a) = nullptr;
  // "field=value" entries a preset may not change (its structure, not its sizes).
  std::vector<std::string> (*structure)(const Architecture& a) = nullptr;
  // An architecture with this section takes no token ids (a vision encoder takes
  // pixels): it has no vocab_size, which is then not required, and refused when given.
  bool no_vocabulary = false;
  // The images an architecture with this section takes (optional; null: it takes token
  // ids or its images are another section's).
  std::optional<ImageInput> (*image_input)(const Architecture& a) = nullptr;
};

struct FamilyRules {
  std::string name;     // the `model_family` value, e.g. "transformer"
  std::string summary;  // one line for errors and docs
  // The fields it takes (the loader reads only these, requires the required ones, and
  // names the family when a file gives another; the writers write only these).
  std::vector<FamilyField> fields;
  // The sections only it takes (their keys are fields too: family_takes knows them).
  std::vector<SectionCodec> sections;
  // The family's checks of a loaded architecture whose values are within their
  // limits (core/spec/limits.h), each error reported through ctx at its field (optional).
  void (*validate)(const Architecture&, const ParseContext&) = nullptr;
  // Why `layout` cannot run `arch` with `workload`, one reason per entry (empty: it
  // can). The generic checks (dp divides the batch) are made by layout_misfits().
  std::vector<std::string> (*layout_misfits)(const Architecture&, const Workload&, const Layout&) = nullptr;
  // Why the family is not sharded by tensor parallelism ("": it is). layout_misfits()
  // then reports every layout with tp > 1 with this reason, before the family's own.
  std::string not_tensor_parallel;
  // The fullest rank's memory at its peak on a backend (memory.h). Required.
  MemoryEstimate (*memory_estimate)(const Architecture&, const Workload&, const Layout&, DeviceKind) = nullptr;
  // Which of the FastKernels benchmark's categories (fastkernels_categories()) `arch`
  // belongs to, for the scores reports give per category. Required.
  FastKernelsCategory (*category)(const Architecture&) = nullptr;
  // The workload `arch` runs when a campaign pairs it with `workload` (optional; null:
  // the workload as written). A vision encoder's sequences are images of a fixed token
  // count, whatever seq_len the workload gives. The planner records the result in the
  // job, so memory, misfits and the stages all see one workload.
  Workload (*workload)(const Architecture& arch, Workload workload) = nullptr;
};

class FamilyRegistry {
 public:
  static FamilyRegistry& global();
  // Throws kInvalidArgument for an empty name, a missing function or a second family
  // of the same name.
  void add(FamilyRules rules);
  const FamilyRules* find(const std::string& name) const { return table_.find(name); }
  // Throws kNotFound naming the known families.
  const FamilyRules& rules(const std::string& name) const { return table_.get(name); }
  std::vector<std::string> names() const { return table_.names(); }

 private:
  NamedRegistry<FamilyRules> table_{"model family"};
};

// Registers every shipped family once (idempotent, thread-safe).
void register_builtin_families();

// The rules of a's model_family (registers the shipped families first).
const FamilyRules& family_rules(const Architecture& a);

// The category of `a` (its family's rule); "" for an architecture of a family this
// program does not have.
std::string fastkernels_category_of(const Architecture& a);

// Whether `rules` takes top-level field `key` (a common field, one of its fields or one
// of its sections).
bool family_takes(const FamilyRules& rules, const std::string& key);
// The codec of `rules`' section `key`, or nullptr.
const SectionCodec* family_section(const FamilyRules& rules, const std::string& key);
// The top-level fields every family takes.
const std::vector<std::string>& common_architecture_fields();

// The workload `a` runs for `w` (its family's rule; `w` itself without one).
Workload family_workload(const Architecture& a, const Workload& w);
// Whether `a` takes no token ids (one of its sections says so: SectionCodec::no_vocabulary).
bool architecture_has_no_vocabulary(const Architecture& a);
// The images `a` takes (a section's SectionCodec::image_input), or nullopt: token ids.
std::optional<ImageInput> architecture_image_input(const Architecture& a);

// One registration function per shipped family (core/spec/families/).
void register_transformer_family(FamilyRegistry& r);
void register_mamba_family(FamilyRegistry& r);
void register_convnext_family(FamilyRegistry& r);

}  // namespace fk::spec
