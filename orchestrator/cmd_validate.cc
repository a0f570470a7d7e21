// `fk validate <file>...`: checks spec files of any kind and prints every error.
#include "core/spec/spec_file.h"
#include "orchestrator/commands.h"

#include <fmt/format.h>
#include <memory>
#include <variant>

namespace fk::orchestrator {
namespace {

std::string describe(const spec::AnySpec& s) {
  if (const auto* a = std::get_if<spec::ArchitectureDoc>(&s))
    return fmt::format("architecture {} ({} presets: {})", a->full.name, a->preset_names().size(),
                       fmt::join(a->preset_names(), ", "));
  if (const auto* w = std::get_if<spec::WorkloadDoc>(&s)) return fmt::format("workload {}", w->full.name);
  const auto& c = std::get<spec::Campaign>(s);
  return fmt::format("campaign {} ({} architectures, {} workloads, {} layouts, {} candidate sets)", c.name,
                     c.architectures.size(), c.workloads.size(), c.layouts.size(), c.candidate_sets.size());
}

}  // namespace

void register_validate(CLI::App& app, int* status) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto quiet = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("validate", "Check spec files (architecture, workload, campaign)");
  sub->add_option("files", *files, "Spec files to check")->required();
  sub->add_flag("-q,--quiet", *quiet, "Print errors only");
  sub->callback([files, quiet, status] {
    int bad = 0;
    for (const auto& f : *files) {
      spec::Diagnostics diags;
      auto s = spec::spec_load_file(f, diags);
      if (!diags.ok() || !s) {
        fmt::print(stderr, "{}", diags.to_string());
        ++bad;
        continue;
      }
      if (!*quiet) fmt::print("{}: ok: {}\n", f, describe(*s));
    }
    if (bad > 0) fmt::print(stderr, "fk validate: {} of {} files invalid\n", bad, files->size());
    *status = bad > 0 ? 1 : 0;
  });
}

}  // namespace fk::orchestrator
