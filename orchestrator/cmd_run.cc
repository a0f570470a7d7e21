// `fk run <campaign.yaml> [--executor local|slurm] [--results DIR] [--resume]`.
#include "orchestrator/commands.h"
#include "orchestrator/run.h"
#include "orchestrator/slurm/slurm_executor.h"

#include <memory>

namespace fk::orchestrator {

void register_run(CLI::App& app, int* status) {
  auto o = std::make_shared<RunOptions>();
  o->executor_kinds["slurm"] = {
      [](boost::asio::io_context& io, const spec::ExecutorSpec& spec) { return make_slurm_executor(io, spec); },
      [](const std::string& native_id) { return slurm_cancel_stale(native_id); }};
  CLI::App* sub = app.add_subcommand("run", "Run a campaign: plan, launch, supervise, retry; results per job");
  sub->add_option("campaign", o->campaign_file, "Campaign spec (YAML)")->required();
  sub->add_option("--executor", o->executor, "local or slurm (default: the campaign's executor.kind)")
      ->check(CLI::IsMember({"local", "slurm"}));
  sub->add_option("--results", o->results_dir, "Results folder (default: results/<campaign name>)");
  sub->add_flag("--resume", o->resume, "Continue an interrupted run in the same results folder");
  sub->add_option("--slots", o->slots, "Ranks the local executor runs at once (default: executor.slots, else cores)");
  sub->add_option("--retries", o->max_retries, "Retries per job (default: executor.retries)");
  sub->add_option("--heartbeat-timeout", o->heartbeat_timeout_s, "Seconds of silence before an attempt counts as hung");
  sub->add_flag("--plain", o->plain, "Plain log lines instead of a live status line");
  sub->callback([o, status] { *status = run_campaign(*o); });
}

}  // namespace fk::orchestrator
