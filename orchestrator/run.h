// `fk run`: drives a campaign to completion through an executor.
//
// Plans the campaign, takes the results folder's lock, writes the job file there,
// replays the journal when resuming (abandoned attempts of a dead orchestrator are
// stopped, their jobs run again; jobs whose files exist and are intact are done, and a
// damaged or replaced file is moved aside and its job run again: journal.h), then launches one
// attempt per job, packing jobs onto the executor's capacity, supervising them on a
// Boost.Asio io_context: attempt completion, per-attempt time limits (the executor),
// heartbeats (silence beyond heartbeat_timeout stops the attempt as hung), SIGINT and
// SIGTERM (stop everything cleanly, journal it, exit 130/143). Failed attempts are
// retried up to executor.retries; a job whose candidates crashed or hung is retried
// without them (drop-and-retry) so its baseline results and the verdict still land.
#pragma once

#include "core/spec/campaign.h"
#include "orchestrator/executor.h"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace fk::orchestrator {

struct RunOptions {
  std::string campaign_file;
  std::string results_dir;  // default: results/<campaign name>
  std::string executor;     // "" = the campaign's executor.kind; local | slurm | fake
  bool resume = false;
  bool plain = false;       // plain log lines even on a terminal
  int slots = 0;            // override executor.slots (local capacity)
  int max_retries = -1;     // override executor.retries
  double heartbeat_timeout_s = -1;  // override executor.heartbeat_timeout
  // Tests and benchmarks: build the executor themselves.
  std::function<std::unique_ptr<Executor>(boost::asio::io_context&)> make_executor;

  // Executor kinds beyond "local", by name: `fk` registers "slurm" (orchestrator/slurm/),
  // which fk_orchestrator itself does not link.
  struct ExecutorKind {
    std::function<std::unique_ptr<Executor>(boost::asio::io_context&, const spec::ExecutorSpec&)> make;
    // Stops an attempt an earlier orchestrator left running (resume), if it is still
    // ours; returns whether it stopped something.
    std::function<bool(const std::string& native_id)> kill_stale;
  };
  std::map<std::string, ExecutorKind> executor_kinds;
};

// Returns the exit status: 0 every job done, 1 some job failed, 2 bad input, 130/143
// interrupted by SIGINT/SIGTERM.
int run_campaign(const RunOptions& options);

// The results folder `fk run` uses for a campaign (options or default).
std::string results_folder(const RunOptions& options, const std::string& campaign_name);

}  // namespace fk::orchestrator
