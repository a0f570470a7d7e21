// `fk plan <campaign.yaml> [--json] [--emit jobs.json]`: expands a campaign into jobs.
// The job file and the table are written as they are made, job by job (job.h,
// plan.h); --json builds its document in memory.
#include "core/spec/spec_file.h"
#include "orchestrator/commands.h"
#include "orchestrator/plan.h"

#include <cstdio>
#include <fmt/format.h>
#include <memory>

namespace fk::orchestrator {

void register_plan(CLI::App& app, int* status) {
  struct Options {
    std::string campaign;
    bool json = false;
    std::string emit;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("plan", "Expand a campaign into jobs and print them");
  sub->add_option("campaign", o->campaign, "Campaign spec (YAML)")->required();
  sub->add_flag("--json", o->json, "Print the plan as JSON");
  sub->add_option("--emit", o->emit, "Also write the job file fk-runner reads");
  sub->callback([o, status] {
    spec::Diagnostics diags;
    auto campaign = spec::campaign_load_file(o->campaign, diags);
    std::optional<Plan> plan;
    if (campaign) plan = plan_campaign(*campaign, diags);
    if (!plan) {
      fmt::print(stderr, "{}", diags.to_string());
      fmt::print(stderr, "fk plan: {} error(s) in {}\n", diags.items().size(), o->campaign);
      *status = 1;
      return;
    }
    if (!o->emit.empty()) spec::job_file_write(o->emit, plan->job_file);
    if (o->json) {
      fmt::print("{}\n", plan_to_json(*plan).dump(2));
    } else {
      fmt::print("campaign {} ({} scale, {} backend): {}\n", campaign->name, campaign->scale,
                 device_kind_name(campaign->backend), o->campaign);
      plan_write_table(*plan, [](std::string_view row) { std::fwrite(row.data(), 1, row.size(), stdout); });
      if (!o->emit.empty()) fmt::print("job file written: {}\n", o->emit);
    }
    *status = 0;
  });
}

}  // namespace fk::orchestrator
