// Workloads (what the model is asked to do) and layouts (how ranks split it).
//
// A workload is a batch of sequences: `seq_len` prompt tokens each (prefill), then
// `decode_steps` generated tokens each against the KV cache. `phase` says which of the
// two the kernel stage measures: prefill shapes (batch*seq_len tokens) or decode
// shapes (batch tokens attending to seq_len + step cached positions).
// A layout is tp x pp x dp ranks in Megatron order (TP fastest-varying).
#pragma once

#include "core/dtype.h"
#include "core/spec/architecture.h"
#include "core/spec/preset_doc.h"
#include "core/spec/yaml_reader.h"

#include <optional>
#include <string>
#include <vector>

namespace fk::spec {

enum class Phase { kPrefill, kDecode };
std::string_view phase_name(Phase p);

struct Workload {
  std::string name;
  std::string preset = "full";
  Phase phase = Phase::kPrefill;
  int64_t batch = 1;
  int64_t seq_len = 1;
  int64_t decode_steps = 0;
  std::optional<DType> dtype;  // default: the architecture's dtype
  DType dtype_for(const Architecture& a) const { return dtype.value_or(a.dtype); }
  int64_t max_positions() const { return seq_len + decode_steps; }
  bool operator==(const Workload&) const = default;
};

using WorkloadDoc = PresetDoc<Workload>;

std::optional<WorkloadDoc> workload_parse(const YAML::Node& root, const std::string& file, Diagnostics& diags);
// Parses a workload written inline (a map inside a campaign), at `path`.
std::optional<WorkloadDoc> workload_parse_inline(const YAML::Node& node, const ParseContext& ctx,
                                                 const std::string& path);
// Semantic checks of one resolved workload, its limits (core/spec/limits.h) included;
// `ctx.where` holds field positions. Used by the loader and the job-file reader.
void workload_validate(const Workload& w, const ParseContext& ctx);

struct Layout {
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t dp = 1;
  int64_t ranks() const { return tp * pp * dp; }
  // Canonical name: "tp2pp1dp1".
  std::string name() const;
  bool operator==(const Layout&) const = default;
};

// Parses "tp2", "tp2pp2", "tp1pp2dp2" (any order, missing parts are 1).
std::optional<Layout> layout_parse(const std::string& text);
// Reads a layout written as a string ("tp2pp2") or a map ({tp: 2, pp: 2}).
std::optional<Layout> layout_read(const YAML::Node& node, const ParseContext& ctx, const std::string& path);
// Checks tp, pp and dp against their limit (core/spec/limits.h); `path` prefixes the
// fields. Returns whether all three are inside.
bool layout_validate(const Layout& l, const ParseContext& ctx, const std::string& path);

// Why `layout` cannot run `arch` x `workload`; empty when it fits. Each entry is one
// sentence naming the numbers involved.
std::vector<std::string> layout_misfits(const Architecture& arch, const Workload& workload, const Layout& layout);

}  // namespace fk::spec
