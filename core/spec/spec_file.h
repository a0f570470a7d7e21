// Loading any spec file by its `kind` (architecture, workload or campaign), as
// `fk validate` does.
#pragma once

#include "core/spec/campaign.h"

#include <string>
#include <variant>

namespace fk::spec {

using AnySpec = std::variant<ArchitectureDoc, WorkloadDoc, Campaign>;

// Reads, parses and validates the file; nullopt when an error was reported.
std::optional<AnySpec> spec_load_file(const std::string& file, Diagnostics& diags);
// The same for text already in memory (`file` names it in messages). Campaigns
// resolve references relative to `file`.
std::optional<AnySpec> spec_load_string(const std::string& text, const std::string& file, Diagnostics& diags);

// Convenience loaders that also check the kind.
std::optional<Campaign> campaign_load_file(const std::string& file, Diagnostics& diags);
std::optional<ArchitectureDoc> architecture_load_file(const std::string& file, Diagnostics& diags);

}  // namespace fk::spec
