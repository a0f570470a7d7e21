#include "orchestrator/slurm/slurm_executor.h"

#include "core/error.h"
#include "core/fs_util.h"
#include "core/subprocess.h"
#include "orchestrator/launch.h"
#include "orchestrator/slurm/attempt_files.h"
#include "orchestrator/slurm/slurm_cli_client.h"

#include <boost/asio/post.hpp>

#include <fmt/format.h>
#include <chrono>
#include <cstdlib>
#include <filesystem>

namespace fk::orchestrator {
namespace fs = std::filesystem;

SlurmExecutor::SlurmExecutor(boost::asio::io_context& io, std::shared_ptr<SlurmClient> client,
                             SlurmExecutorOptions options)
    : io_(io), client_(std::move(client)), options_(std::move(options)), timer_(io), worker_(io) {
  if (options_.template_file.empty()) options_.template_file = slurm_default_template();
  if (options_.script.runner.empty()) options_.script.runner = runner_path();
  if (options_.poll_interval_s <= 0) options_.poll_interval_s = 5;
  template_text_ = fs_read_file(options_.template_file);
  slurm_template_check(template_text_, options_.template_file);
}

SlurmExecutor::~SlurmExecutor() {
  alive_.reset();
  timer_.cancel();
  for (const auto& [id, a] : attempts_)
    if (!a->track.job_id.empty()) client_->cancel(a->track.job_id);
}

double SlurmExecutor::now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::function<void()> SlurmExecutor::guarded(const std::weak_ptr<int>& alive, std::function<void()> f) {
  return [alive, f = std::move(f)] {
    if (alive.lock()) f();
  };
}

std::string SlurmExecutor::attempt_dir(const LaunchRequest& r) const {
  const std::string base = options_.attempts_dir.empty() ? r.results_dir + "/.fk-slurm" : options_.attempts_dir;
  std::string name = r.attempt_id;
  for (char& c : name)
    if (c == '/' || c == ' ' || c == '\n') c = '_';
  return fs::absolute(fs::path(base) / name).lexically_normal().string();
}

void SlurmExecutor::launch(const LaunchRequest& request, Done done) {
  if (attempts_.count(request.attempt_id)) fail(ErrorKind::kInternal, "attempt {} launched twice", request.attempt_id);
  auto a = std::make_shared<Attempt>();
  a->request = request;
  a->done = std::move(done);
  a->dir = attempt_dir(request);
  a->launched_at = now();
  const AttemptFiles files{a->dir};
  std::error_code ec;
  fs::create_directories(a->dir, ec);
  if (ec) fail(ErrorKind::kIo, "{}: cannot create the attempt folder: {}", a->dir, ec.message());
  for (const auto& stale : {files.exit_code(), files.started()}) fs::remove(stale, ec);
  if (!request.log_file.empty()) fs::create_directories(fs::path(request.log_file).parent_path(), ec);
  const std::string script = slurm_template_render(template_text_, options_.template_file,
                                                   slurm_script_values(request, options_.script, a->dir));
  fs_write_file_atomic(files.script(), script);
  a->script = script;
  a->track.attempt_id = request.attempt_id;
  attempts_[request.attempt_id] = a;
  submit(a);
}

void SlurmExecutor::submit(const std::shared_ptr<Attempt>& a) {
  ++a->submit_tries;
  SlurmSubmit s;
  s.script_path = AttemptFiles{a->dir}.script();
  s.script = a->script;
  worker_.post([this, client = client_, s, id = a->request.attempt_id, alive = std::weak_ptr<int>(alive_)] {
    const SlurmSubmitResult r = client->submit(s);
    return guarded(alive, [this, id, r] { submitted(id, r); });
  });
}

void SlurmExecutor::submitted(const std::string& attempt_id, const SlurmSubmitResult& r) {
  auto it = attempts_.find(attempt_id);
  if (it == attempts_.end()) return;
  auto a = it->second;
  if (!r.ok()) {
    if (!a->cancel_requested && r.transient && a->submit_tries <= options_.submit_retries) {
      auto retry = std::make_shared<boost::asio::steady_timer>(
          io_, std::chrono::milliseconds(static_cast<int64_t>(options_.submit_retry_delay_s * 1000)));
      retry->async_wait(
          [this, retry, attempt_id, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& ec) {
            if (ec || !alive.lock()) return;
            auto again = attempts_.find(attempt_id);
            if (again == attempts_.end()) return;
            if (again->second->cancel_requested) {
              AttemptResult c;
              c.end = AttemptEnd::kCancelled;
              c.reason = "cancelled before Slurm accepted it";
              finish(again->second, c);
              return;
            }
            submit(again->second);
          });
      return;
    }
    AttemptResult f;
    f.end = a->cancel_requested ? AttemptEnd::kCancelled : AttemptEnd::kFailed;
    f.reason = a->cancel_requested ? "cancelled before Slurm accepted it"
                                   : fmt::format("Slurm refused the job ({} tr{}): {}", a->submit_tries,
                                                 a->submit_tries == 1 ? "y" : "ies", r.error);
    finish(a, f);
    return;
  }
  a->track = slurm_track_start(a->request, r.job_id, a->launched_at);
  if (a->cancel_requested && slurm_track_cancel(a->track, SlurmCancelCause::kUser, "cancelled", now()))
    send_cancel(attempt_id, r.job_id);
  schedule_poll();
}

void SlurmExecutor::schedule_poll() {
  if (timer_armed_) return;
  timer_armed_ = true;
  timer_.expires_after(std::chrono::microseconds(static_cast<int64_t>(options_.poll_interval_s * 1e6)));
  timer_.async_wait([this, alive = std::weak_ptr<int>(alive_)](const boost::system::error_code& ec) {
    if (ec || !alive.lock()) return;
    timer_armed_ = false;
    poll();
  });
}

void SlurmExecutor::poll() {
  std::vector<std::string> ids, job_ids;
  for (const auto& [id, a] : attempts_)
    if (!a->track.job_id.empty()) {
      ids.push_back(id);
      job_ids.push_back(a->track.job_id);
    }
  if (ids.empty()) return;  // nothing submitted yet: submitted() schedules the next poll
  if (query_in_flight_) {
    schedule_poll();
    return;
  }
  query_in_flight_ = true;
  worker_.post([this, client = client_, ids, job_ids, alive = std::weak_ptr<int>(alive_)] {
    const SlurmQuery q = client->query(job_ids);
    return guarded(alive, [this, ids, q] {
      query_in_flight_ = false;
      polled(ids, q);
    });
  });
}

void SlurmExecutor::polled(const std::vector<std::string>& attempt_ids, const SlurmQuery& q) {
  const double t = now();
  for (const auto& id : attempt_ids) {
    auto it = attempts_.find(id);
    if (it == attempts_.end()) continue;
    auto a = it->second;
    if (!q.ok()) {
      apply(a, slurm_track_unreachable(a->track, q.error, t, options_.policy));
      continue;
    }
    SlurmObservation obs;
    obs.accounting = q.accounting;
    if (auto j = q.jobs.find(a->track.job_id); j != q.jobs.end()) obs.info = j->second;
    if (!obs.info && !q.complete) continue;  // sacct hiccup: no evidence either way
    if (obs.info && slurm_state_active(obs.info->state)) a->started = true;
    if (!obs.info || slurm_state_final(obs.info->state)) {
      const AttemptFiles files{a->dir};
      obs.exit = exit_record_read(files);
      obs.start = start_record_read(files);
    }
    apply(a, slurm_track_observe(a->track, obs, t, options_.policy));
  }
  if (!attempts_.empty()) schedule_poll();
}

void SlurmExecutor::apply(const std::shared_ptr<Attempt>& a, const SlurmTrackDecision& d) {
  if (d.scancel) send_cancel(a->request.attempt_id, a->track.job_id);
  if (d.result) finish(a, *d.result);
}

void SlurmExecutor::send_cancel(const std::string& attempt_id, const std::string& job_id) {
  worker_.post([this, client = client_, attempt_id, job_id, alive = std::weak_ptr<int>(alive_)] {
    const std::string error = client->cancel(job_id);
    if (error.empty()) return std::function<void()>();
    return guarded(alive, [this, attempt_id, error] {
      auto it = attempts_.find(attempt_id);
      if (it != attempts_.end() && it->second->track.notes.empty()) it->second->track.notes.push_back(error);
    });
  });
}

void SlurmExecutor::finish(const std::shared_ptr<Attempt>& a, AttemptResult r) {
  attempts_.erase(a->request.attempt_id);
  r.attempt_id = a->request.attempt_id;
  if (r.native_id.empty()) r.native_id = a->track.job_id;
  if (r.seconds <= 0) r.seconds = now() - a->launched_at;
  boost::asio::post(io_, [done = a->done, r] { done(r); });
}

void SlurmExecutor::cancel(const std::string& attempt_id) {
  auto it = attempts_.find(attempt_id);
  if (it == attempts_.end()) return;
  auto a = it->second;
  if (a->track.job_id.empty()) {  // sbatch has not answered yet
    a->cancel_requested = true;
    return;
  }
  if (slurm_track_cancel(a->track, SlurmCancelCause::kUser, "cancelled", now()))
    send_cancel(attempt_id, a->track.job_id);
}

std::vector<std::pair<std::string, std::string>> SlurmExecutor::running() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [id, a] : attempts_)
    if (!a->track.job_id.empty()) out.emplace_back(id, a->track.job_id);
  return out;
}

bool SlurmExecutor::attempt_started(const std::string& attempt_id) const {
  auto it = attempts_.find(attempt_id);
  return it != attempts_.end() && it->second->started;
}

std::unique_ptr<Executor> make_slurm_executor(boost::asio::io_context& io, const spec::ExecutorSpec& spec,
                                              SlurmExecutorOptions options) {
  options.script.slurm = spec.slurm;
  if (options.capacity == 0 && spec.slots > 0) options.capacity = static_cast<int>(spec.slots);
  if (const char* poll = std::getenv("FK_SLURM_POLL_INTERVAL"); poll && *poll && options.poll_interval_s == 5)
    options.poll_interval_s = std::atof(poll);
  return std::make_unique<SlurmExecutor>(io, std::make_shared<SlurmCliClient>(), std::move(options));
}

bool slurm_cancel_stale(const std::string& job_id) {
  if (job_id.empty() || job_id.find_first_not_of("0123456789_") != std::string::npos) return false;
  SubprocessOptions so;
  so.timeout_s = 30;
  const SubprocessResult q = subprocess_run({"squeue", "--noheader", "--jobs=" + job_id, "--format=%j"}, so);
  if (!q.ok() || q.output.rfind("fk-", 0) != 0) return false;
  return subprocess_run({"scancel", job_id}, so).ok();
}

}  // namespace fk::orchestrator
