// `fk status [--results DIR]`: what a (running or finished) `fk run` has done, from
// another shell: the lock's holder, job counts from the job file and the journal, the
// jobs running now, failures with their reasons, the last events.
#include "core/error.h"
#include "core/spec/job.h"
#include "orchestrator/campaign_state.h"
#include "orchestrator/commands.h"
#include "orchestrator/journal.h"
#include "orchestrator/lock.h"

#include <filesystem>
#include <fmt/format.h>
#include <memory>

namespace fk::orchestrator {
namespace fs = std::filesystem;

namespace {

int status_main(const std::string& dir, int last_events) {
  const std::string jobs_file = dir + "/jobs.json";
  if (!fs::exists(jobs_file)) {
    fmt::print(stderr, "fk status: {} holds no campaign run (no jobs.json); pass the folder fk run used (--results)\n",
               dir);
    return 2;
  }
  spec::JobFile jf;
  try {
    jf = spec::job_file_read(jobs_file);
  } catch (const Error& e) {  // damaged, or written by another version of fk
    fmt::print(stderr, "fk status: {}\n", e.what());
    return e.kind() == ErrorKind::kInvalidArgument ? 2 : 1;
  }
  CampaignState state;
  for (const auto& j : jf.jobs) {
    JobTrack t;
    t.id = j.id;
    t.ranks = static_cast<int>(j.layout.ranks());
    t.has_candidates = !j.candidates.ops.empty();
    state.add(t);
  }
  const auto events = Journal::read(dir + "/.fk-journal.jsonl");
  // Keep the running view: replay without abandoning open attempts.
  std::map<std::string, std::string> open;
  for (const auto& e : events) {
    const std::string kind = e.value("event", "");
    if (kind == "launch") open[e.value("attempt", "")] = e.value("job", "");
    if (kind == "end") open.erase(e.value("attempt", ""));
  }
  state.replay(events);
  for (const auto& id : state.order())
    if (fs::exists(dir + "/" + id + ".h5")) state.mark_done(id);
  const auto holder = ResultsLock::holder(dir);
  const Counts c = state.counts();
  fmt::print("campaign {} ({}): {} jobs\n", jf.campaign, jf.campaign_file, c.total());
  fmt::print("  done {}, failed {}, retried {}, not done {}\n", c.done, c.failed, c.retried, c.pending + c.running);
  fmt::print("  fk run: {}\n", holder ? fmt::format("running ({})", *holder) : "not running");
  if (holder)
    for (const auto& [attempt, job] : open)
      if (state.job(job).phase != JobPhase::kDone) fmt::print("  running: job {} (attempt {})\n", job, attempt);
  for (const auto& id : state.order())
    if (state.job(id).phase == JobPhase::kFailed)
      fmt::print("  failed: job {} after {} attempt(s): {}\n", id, state.job(id).attempts, state.job(id).reason);
  const int n = static_cast<int>(events.size());
  if (last_events > 0 && n > 0) {
    fmt::print("  last events:\n");
    for (int i = std::max(0, n - last_events); i < n; ++i) fmt::print("    {}\n", events[static_cast<size_t>(i)].dump());
  }
  return c.failed > 0 ? 1 : 0;
}

}  // namespace

void register_status(CLI::App& app, int* status) {
  auto dir = std::make_shared<std::string>("results");
  auto last = std::make_shared<int>(5);
  CLI::App* sub = app.add_subcommand("status", "Show the progress of fk run for a results folder");
  sub->add_option("--results", *dir, "Results folder of the run (default: results)");
  sub->add_option("--events", *last, "How many recent journal events to show (default 5)");
  sub->callback([dir, last, status] { *status = status_main(fs::absolute(*dir).string(), *last); });
}

}  // namespace fk::orchestrator
