#include "orchestrator/run.h"

#include "core/error.h"
#include "core/spec/spec_file.h"
#include "orchestrator/campaign_state.h"
#include "orchestrator/heartbeat.h"
#include "orchestrator/journal.h"
#include "orchestrator/local_executor.h"
#include "orchestrator/lock.h"
#include "orchestrator/plan.h"
#include "orchestrator/progress.h"
#include "results/h5/file_sum.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csignal>
#include <deque>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>
#include <thread>
#include <unistd.h>

namespace fk::orchestrator {
namespace fs = std::filesystem;
namespace asio = boost::asio;

std::string results_folder(const RunOptions& o, const std::string& campaign_name) {
  return fs::absolute(o.results_dir.empty() ? "results/" + campaign_name : o.results_dir).lexically_normal().string();
}

namespace {

class Orchestrator {
 public:
  Orchestrator(const RunOptions& o, const spec::Campaign& c, const Plan& plan, std::string results)
      : o_(o), campaign_(c), plan_(plan), results_(std::move(results)), journal_(results_ + "/.fk-journal.jsonl"),
        progress_(stdout, o.plain), signals_(io_, SIGINT, SIGTERM), watchdog_(io_) {
    policy_.max_retries = o.max_retries >= 0 ? o.max_retries : static_cast<int>(c.executor.retries);
    heartbeat_timeout_ = o.heartbeat_timeout_s > 0 ? o.heartbeat_timeout_s : c.executor.heartbeat_timeout_s;
  }

  int run(const std::vector<nlohmann::json>& history) {
    for (const auto& j : plan_.job_file.jobs) {
      JobTrack t;
      t.id = j.id;
      t.ranks = static_cast<int>(j.layout.ranks());
      t.has_candidates = !j.candidates.ops.empty();
      state_.add(t);
      jobs_[j.id] = &j;
    }
    const auto stale = state_.replay(history);
    for (const auto& [attempt, native] : stale) {
      const bool killed = !native.empty() && native != "fake" && kill_stale(native);
      journal_.append("abandoned", {{"attempt", attempt}, {"native_id", native}, {"killed", killed}});
      if (killed) progress_.log(fmt::format("stopped attempt {} (pid {}) left by an earlier fk run", attempt, native));
    }
    // The job files are the truth, checked against the journal (journal.h): a job is
    // done exactly when its file exists and is intact with the hash the journal
    // recorded; a file that is not is moved aside and its job runs again.
    const std::map<std::string, std::string> hashes = Journal::job_hashes(history);
    int found = 0, missing = 0, damaged = 0;
    for (const auto& id : state_.order()) {
      JobTrack& t = state_.job(id);
      const auto recorded = hashes.find(id);
      const FileVerdict f = check_file(id, recorded != hashes.end() ? recorded->second : "");
      if (f.exists && f.problem.empty()) {
        found += t.phase != JobPhase::kDone;
        state_.mark_done(id);
        if (recorded == hashes.end()) journal_.append("done", {{"job", id}, {"hash", f.hash}, {"found", true}});
        continue;
      }
      if (f.exists) {
        set_aside(id, f.problem);
        ++damaged;
      } else if (t.phase == JobPhase::kDone) {
        ++missing;
      }
      if (t.phase == JobPhase::kDone) t.phase = JobPhase::kPending;
    }
    if (missing > 0) progress_.log(fmt::format("{} job(s) the journal records as done have no file: running them again", missing));
    if (damaged > 0)
      progress_.log(fmt::format("{} job file(s) damaged or replaced: moved aside, running those jobs again", damaged));
    // Resume: jobs given up for a reason that may have gone away (a full disk, a lost
    // node, a time limit) get another chance; those that failed by themselves do not.
    const std::vector<std::string> again = o_.resume ? state_.retry_given_up() : std::vector<std::string>{};
    for (const auto& id : again) journal_.append("retry_given_up", {{"job", id}, {"reason", state_.job(id).reason}});
    if (!again.empty())
      progress_.log(fmt::format("{} job(s) given up for a reason that may have gone away (infrastructure, I/O, time "
                                "limit): running them again",
                                again.size()));
    journal_.append("start", {{"campaign", campaign_.name},
                              {"campaign_file", campaign_.file},
                              {"jobs", plan_.job_file.jobs.size()},
                              {"resume", o_.resume},
                              {"pid", ::getpid()}},
                    true);
    executor_ = o_.make_executor ? o_.make_executor(io_) : make_executor();
    const int capacity = executor_->capacity();
    for (const auto& j : plan_.job_file.jobs)
      if (capacity > 0 && j.layout.ranks() > capacity) {
        fmt::print(stderr,
                   "fk run: job {} ({} {}) needs {} ranks but the {} executor runs {} at once; raise executor.slots "
                   "or drop the layout\n",
                   j.id, j.arch.name, j.layout.name(), j.layout.ranks(), executor_->name(), capacity);
        return 2;
      }
    heartbeat_ = std::make_unique<HeartbeatServer>(io_, executor_->name() == "slurm" ? "0.0.0.0" : "127.0.0.1");
    const Counts start = state_.counts();
    progress_.log(fmt::format("campaign {}: {} jobs, {} already done{}; {} executor, {} ranks at once; results in {}",
                              campaign_.name, start.total(), start.done,
                              found > 0 ? fmt::format(" ({} found on disk)", found) : "", executor_->name(),
                              capacity > 0 ? std::to_string(capacity) : "any", results_));
    for (const auto& id : state_.runnable()) queue_.push_back(id);
    wait_for_signal();
    watch();
    schedule();
    if (state_.finished() && running_.empty()) io_.stop();
    io_.run();
    progress_.finish();
    const Counts end = state_.counts();
    journal_.append(interrupted_ ? "interrupted" : "finished",
                    {{"done", end.done}, {"failed", end.failed}, {"pending", end.pending}});
    for (const auto& id : state_.order()) {
      const JobTrack& t = state_.job(id);
      if (t.phase == JobPhase::kFailed)
        fmt::print(stderr, "fk run: job {} failed after {} attempt(s): {} (log: {})\n", id, t.attempts, t.reason,
                   log_path(fmt::format("{}.a{}", id, t.attempts)));
    }
    fmt::print("fk run: {} of {} jobs done, {} failed{}; results in {}\n", end.done, end.total(), end.failed,
               interrupted_ ? ", interrupted (resume with --resume)" : "", results_);
    if (interrupted_) return 128 + signal_;
    return end.failed > 0 ? 1 : 0;
  }

 private:
  std::string executor_kind() const { return o_.executor.empty() ? campaign_.executor.kind : o_.executor; }

  bool kill_stale(const std::string& native) const {
    const std::string kind = executor_kind();
    if (kind == "local") return LocalExecutor::kill_stale(native);
    const auto it = o_.executor_kinds.find(kind);
    return it != o_.executor_kinds.end() && it->second.kill_stale && it->second.kill_stale(native);
  }

  std::unique_ptr<Executor> make_executor() {
    const std::string kind = executor_kind();
    if (const auto it = o_.executor_kinds.find(kind); it != o_.executor_kinds.end() && it->second.make)
      return it->second.make(io_, campaign_.executor);
    if (kind == "local") {
      int slots = o_.slots > 0 ? o_.slots : static_cast<int>(campaign_.executor.slots);
      if (slots <= 0) slots = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      return std::make_unique<LocalExecutor>(io_, slots);
    }
    fail(ErrorKind::kUnsupported, "executor '{}' is not available in this build (use local)", kind);
  }

  // A job's file as fk run judges it (journal.h): whether it exists, its content hash
  // (results/h5/file_sum.h), and what is wrong with it — "" when it counts as the job's
  // result: its whole-file checksum matches (files without one, e.g. the fake
  // executor's, are taken as they are) and its hash is `expected` (unless "").
  struct FileVerdict {
    bool exists = false;
    std::string hash, problem;
  };
  std::string job_path(const std::string& id) const { return results_ + "/" + id + ".h5"; }
  FileVerdict check_file(const std::string& id, const std::string& expected) const {
    FileVerdict v;
    std::error_code ec;
    v.exists = fs::exists(job_path(id), ec);
    if (!v.exists) return v;
    const h5::FileSumCheck sum = h5::file_sum_check(job_path(id));
    v.hash = sum.hash;
    if (sum.hash.empty() || (sum.summed && sum.state == h5::FileSum::kMismatch))
      v.problem = sum.problem;
    else
      v.problem = h5::file_sum_expect(sum, expected);
    return v;
  }

  // Moves a job file that check_file refused to <id>.h5.damaged (numbered when that is
  // taken: data are never deleted) and journals it; the job is then without a file.
  void set_aside(const std::string& id, const std::string& problem) {
    const std::string from = job_path(id);
    std::string to = from + ".damaged";
    std::error_code ec;
    for (int n = 1; fs::exists(to, ec); ++n) to = fmt::format("{}.damaged.{}", from, n);
    fs::rename(from, to, ec);
    if (ec) {
      progress_.log(fmt::format("job {}: its file {} is damaged ({}) and cannot be moved aside: {}; the job runs again",
                                id, from, problem, ec.message()));
      to.clear();
    } else {
      progress_.log(fmt::format("job {}: its file {} is damaged ({}): moved to {}; the job runs again", id, from,
                                problem, to));
    }
    journal_.append("damaged", {{"job", id}, {"file", from}, {"moved_to", to}, {"reason", problem}}, true);
  }
  std::string log_path(const std::string& attempt) const { return results_ + "/logs/" + attempt + ".log"; }

  // Launches pending jobs in plan order while they fit (a job that does not fit waits
  // for room, and the jobs behind it wait too: order is kept).
  void schedule() {
    if (interrupted_) return;
    const int capacity = executor_->capacity();
    while (!queue_.empty()) {
      const std::string id = queue_.front();
      if (state_.job(id).phase != JobPhase::kPending) {
        queue_.pop_front();
        continue;
      }
      const int ranks = static_cast<int>(jobs_.at(id)->layout.ranks());
      if (capacity > 0 && used_ + ranks > capacity) break;
      queue_.pop_front();
      launch(id);
    }
    progress_.status(state_.counts(), mean_job_s(), std::max(1, static_cast<int>(running_.size())));
  }

  double mean_job_s() const { return finished_jobs_ > 0 ? total_job_s_ / finished_jobs_ : -1; }

  void launch(const std::string& id) {
    JobTrack& t = state_.job(id);
    const spec::Job& job = *jobs_.at(id);
    LaunchRequest r;
    r.attempt_id = fmt::format("{}.a{}", id, t.attempts + 1);
    r.job_ids = {id};
    r.jobs_file = results_ + "/jobs.json";
    r.results_dir = results_;
    r.ranks = static_cast<int>(job.layout.ranks());
    r.unbound = job.backend != DeviceKind::kCpu;
    r.time_limit_s = job.time_limit_s;
    r.heartbeat = heartbeat_->address(executor_->name() == "slurm" ? hostname() : "127.0.0.1");
    r.heartbeat_interval_s = heartbeat_interval_for(heartbeat_timeout_);
    r.log_file = log_path(r.attempt_id);
    r.runner_args = {"--force"};
    if (t.quarantined)
      r.runner_args.insert(r.runner_args.end(),
                           {"--quarantine", fmt::format("an earlier attempt crashed or hung: {}", t.reason)});
    state_.launched(id, r.attempt_id, t.quarantined);
    journal_.append("launch", {{"job", id}, {"attempt", r.attempt_id}, {"ranks", r.ranks}, {"quarantined", t.quarantined}});
    heartbeat_->expect(r.attempt_id);
    running_[r.attempt_id] = id;
    used_ += r.ranks;
    started_[r.attempt_id] = std::chrono::steady_clock::now();
    executor_->launch(r, [this, id, ranks = r.ranks](const AttemptResult& res) {
      used_ -= ranks;
      ended(id, res);
    });
    if (const std::string native = executor_->native_id(r.attempt_id); !native.empty())
      journal_.append("native_id", {{"job", id}, {"attempt", r.attempt_id}, {"native_id", native}});
    progress_.log(fmt::format("job {} {} {} {}: attempt {} started{}", id, job.arch.name, job.layout.name(),
                              job.workload.name, t.attempts, t.quarantined ? " (candidates quarantined)" : ""));
  }

  void ended(const std::string& id, AttemptResult r) {
    running_.erase(r.attempt_id);
    heartbeat_->forget(r.attempt_id);
    if (hung_.count(r.attempt_id)) {
      r.end = AttemptEnd::kTimedOut;
      r.reason = hung_[r.attempt_id];
    }
    // A fresh file has no recorded hash yet; this one is what the journal records.
    const FileVerdict verdict = check_file(id, "");
    const bool file = verdict.exists && verdict.problem.empty();
    if (verdict.exists && !file) {
      set_aside(id, verdict.problem);
      if (r.end == AttemptEnd::kSucceeded) r.reason = "its job file is damaged: " + verdict.problem;
    }
    if (interrupted_ && !file) {
      journal_.append("end", {{"job", id}, {"attempt", r.attempt_id}, {"end", attempt_end_name(r.end)},
                              {"decision", "interrupted"}, {"reason", "stopped by a signal"}});
      state_.job(id).phase = JobPhase::kPending;
      if (running_.empty()) io_.stop();
      return;
    }
    const Decision d = state_.ended(id, r, file, policy_);
    nlohmann::json end = {{"job", id},
                          {"attempt", r.attempt_id},
                          {"end", attempt_end_name(r.end)},
                          {"exit_code", r.exit_code},
                          {"signal", r.signal},
                          {"native_id", r.native_id},
                          {"reason", r.reason},
                          {"decision", decision_name(d)}};
    if (d == Decision::kDone) end["hash"] = verdict.hash;  // checked before use (check_file)
    journal_.append("end", std::move(end));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_[r.attempt_id]).count();
    started_.erase(r.attempt_id);
    if (d == Decision::kDone) {
      total_job_s_ += secs;
      ++finished_jobs_;
      progress_.log(fmt::format("job {} done in {:.1f} s", id, secs));
    } else {
      progress_.log(fmt::format("job {} attempt {}: {} ({}) -> {}; log {}", id, r.attempt_id,
                                attempt_end_name(r.end), r.reason.empty() ? "no reason given" : r.reason,
                                decision_name(d), log_path(r.attempt_id)));
    }
    // Stopping (a job file may still land after the signal: that job is done) ends when
    // the last attempt has; nothing new starts meanwhile.
    if (running_.empty() && (interrupted_ || state_.finished())) {
      io_.stop();
      return;
    }
    if (d == Decision::kRetry || d == Decision::kRetryQuarantined) queue_.push_back(id);
    schedule();
  }

  // Every second: attempts that fell silent beyond the heartbeat timeout are stopped.
  void watch() {
    watchdog_.expires_after(std::chrono::seconds(1));
    watchdog_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      for (const auto& [attempt, job] : running_) {
        const double silent = heartbeat_->silence_s(attempt);
        if (executor_->sends_heartbeats() && heartbeat_timeout_ > 0 && silent > heartbeat_timeout_ &&
            !hung_.count(attempt)) {
          hung_[attempt] = fmt::format("no heartbeat for {:.0f} s: hung, stopped", silent);
          progress_.log(fmt::format("job {}: attempt {} silent for {:.0f} s, stopping it", job, attempt, silent));
          executor_->cancel(attempt);
        }
      }
      progress_.status(state_.counts(), mean_job_s(), std::max(1, static_cast<int>(running_.size())));
      watch();
    });
  }

  // SIGINT/SIGTERM: the first stops every attempt cleanly (interrupt); a second one,
  // while attempts are still stopping, forces the exit at once (the executor kills what
  // is left when it is destroyed; resume treats those attempts as abandoned).
  void wait_for_signal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (!interrupted_) {
        interrupt(sig);
        wait_for_signal();
        return;
      }
      progress_.log(fmt::format("second {}: forcing the exit, {} attempt(s) killed", sig == SIGINT ? "SIGINT" : "SIGTERM",
                                running_.size()));
      journal_.append("signal", {{"signal", sig}, {"forced", true}});
      io_.stop();
    });
  }

  void interrupt(int sig) {
    interrupted_ = true;
    signal_ = sig;
    progress_.log(fmt::format("{} received: stopping {} running attempt(s)", sig == SIGINT ? "SIGINT" : "SIGTERM",
                              running_.size()));
    journal_.append("signal", {{"signal", sig}});
    if (running_.empty()) {
      io_.stop();
      return;
    }
    std::vector<std::string> attempts;
    for (const auto& [a, j] : running_) attempts.push_back(a);
    for (const auto& a : attempts) executor_->cancel(a);
  }

  static std::string hostname() {
    char buf[256] = {};
    gethostname(buf, sizeof buf - 1);
    return buf;
  }

  const RunOptions& o_;
  const spec::Campaign& campaign_;
  const Plan& plan_;
  std::string results_;
  Journal journal_;
  Progress progress_;
  asio::io_context io_;
  asio::signal_set signals_;
  asio::steady_timer watchdog_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<HeartbeatServer> heartbeat_;
  CampaignState state_;
  RetryPolicy policy_;
  double heartbeat_timeout_ = 0;
  std::map<std::string, const spec::Job*> jobs_;
  std::map<std::string, std::string> running_;  // attempt -> job
  std::deque<std::string> queue_;               // pending jobs in launch order
  int used_ = 0;                                // ranks of running attempts
  std::map<std::string, std::chrono::steady_clock::time_point> started_;
  std::map<std::string, std::string> hung_;
  bool interrupted_ = false;
  int signal_ = 0;
  double total_job_s_ = 0;
  int finished_jobs_ = 0;
};

}  // namespace

int run_campaign(const RunOptions& o) {
  spec::Diagnostics diags;
  auto campaign = spec::campaign_load_file(o.campaign_file, diags);
  std::optional<Plan> plan;
  if (campaign) plan = plan_campaign(*campaign, diags);
  if (!plan) {
    fmt::print(stderr, "{}fk run: {} error(s) in {}\n", diags.to_string(), diags.items().size(), o.campaign_file);
    return 2;
  }
  const std::string results = results_folder(o, campaign->name);
  std::error_code ec;
  fs::create_directories(results + "/logs", ec);
  if (ec) {
    fmt::print(stderr, "fk run: cannot create {}: {}\n", results, ec.message());
    return 2;
  }
  try {
    ResultsLock lock(results);
    const std::string journal = results + "/.fk-journal.jsonl";
    const auto history = Journal::read(journal);
    if (!history.empty() && !o.resume) {
      fmt::print(stderr,
                 "fk run: {} already holds a run of a campaign (journal {}); continue it with --resume, or choose "
                 "another --results\n",
                 results, journal);
      return 2;
    }
    spec::job_file_write(results + "/jobs.json", plan->job_file);
    Orchestrator orch(o, *campaign, *plan, results);
    return orch.run(history);
  } catch (const Error& e) {
    fmt::print(stderr, "fk run: {}\n", e.what());
    return e.kind() == ErrorKind::kInvalidArgument ? 2 : 1;
  }
}

}  // namespace fk::orchestrator
