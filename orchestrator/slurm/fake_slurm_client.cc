#include "orchestrator/slurm/fake_slurm_client.h"

#include "orchestrator/slurm/attempt_files.h"

#include <fmt/format.h>
#include <filesystem>
#include <fstream>

namespace fk::orchestrator {
namespace fs = std::filesystem;

FakeSlurmClient::FakeSlurmClient() = default;

void FakeSlurmClient::plan(std::vector<FakeSlurmStep> steps) {
  std::lock_guard lock(mutex_);
  plans_.push_back(std::move(steps));
}

void FakeSlurmClient::set_accounting(bool available) {
  std::lock_guard lock(mutex_);
  accounting_ = available;
}

void FakeSlurmClient::set_squeue_keeps(int polls) {
  std::lock_guard lock(mutex_);
  squeue_keeps_ = polls;
}

void FakeSlurmClient::fail_queries(int count, std::string error) {
  std::lock_guard lock(mutex_);
  fail_queries_ = count;
  query_error_ = std::move(error);
}

void FakeSlurmClient::fail_submits(int count, std::string error, bool transient) {
  std::lock_guard lock(mutex_);
  fail_submits_ = count;
  submit_error_ = std::move(error);
  submit_transient_ = transient;
}

void FakeSlurmClient::set_seconds_per_query(double s) {
  std::lock_guard lock(mutex_);
  seconds_per_query_ = s;
}

double FakeSlurmClient::now() const {
  std::lock_guard lock(mutex_);
  return now_;
}

int FakeSlurmClient::queries() const {
  std::lock_guard lock(mutex_);
  return queries_;
}

std::vector<std::string> FakeSlurmClient::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

std::vector<SlurmSubmit> FakeSlurmClient::submitted() const {
  std::lock_guard lock(mutex_);
  return submitted_;
}

std::vector<std::vector<std::string>> FakeSlurmClient::queried() const {
  std::lock_guard lock(mutex_);
  return queried_;
}

SlurmSubmitResult FakeSlurmClient::submit(const SlurmSubmit& request) {
  std::lock_guard lock(mutex_);
  SlurmSubmitResult r;
  if (fail_submits_ > 0) {
    --fail_submits_;
    r.error = submit_error_;
    r.transient = submit_transient_;
    return r;
  }
  submitted_.push_back(request);
  Job job;
  job.id = std::to_string(next_id_++);
  job.attempt_dir = fs::path(request.script_path).parent_path().string();
  if (!plans_.empty()) {
    job.steps = std::move(plans_.front());
    plans_.pop_front();
  }
  if (job.steps.empty())
    job.steps = {{SlurmState::kPending, "Priority"}, {SlurmState::kRunning}, {SlurmState::kCompleted}};
  job.info.job_id = job.id;
  job.info.source = "squeue";
  enter(job, job.steps[0]);
  r.job_id = job.id;
  jobs_[job.id] = std::move(job);
  return r;
}

void FakeSlurmClient::write_exit(const Job& job, int exit_code, bool terminated) {
  ExitRecord e;
  e.exit_code = exit_code;
  e.restarts = job.restarts;
  e.job_id = job.id;
  e.terminated = terminated;
  std::ofstream(AttemptFiles{job.attempt_dir}.exit_code()) << exit_record_format(e);
}

void FakeSlurmClient::enter(Job& job, const FakeSlurmStep& step) {
  if (slurm_state_waiting(step.state) && job.ran) {  // requeued: the script got SIGTERM and starts again later
    if (step.requeue && step.exit_file) write_exit(job, 143, true);
    job.ran = false;
  }
  if (step.requeue) ++job.restarts;
  SlurmJobInfo& i = job.info;
  i.state = step.state;
  i.state_text = std::string(slurm_state_name(step.state));
  i.reason = step.reason;
  i.restarts = job.restarts;
  i.exit_code = -1;
  i.signal = 0;
  const AttemptFiles files{job.attempt_dir};
  if (slurm_state_active(step.state) && !job.ran) {  // the script starts (again)
    job.ran = true;
    std::error_code ec;
    fs::remove(files.exit_code(), ec);
    std::ofstream(files.started(), std::ios::app) << fmt::format("{} {} fakenode {:.0f}\n", job.id, job.restarts, now_);
  }
  if (slurm_state_final(step.state)) {
    job.final = true;
    i.exit_code = step.exit_code;
    i.signal = step.signal;
    if (step.exit_file && job.ran) write_exit(job, step.exit_code, step.terminated);
  }
}

void FakeSlurmClient::advance(Job& job) {
  if (job.final) return;
  if (job.cancel_requested) {
    FakeSlurmStep c{SlurmState::kCancelled, "None", 0, 15};
    c.terminated = true;
    c.exit_code = 143;
    enter(job, c);
    job.info.exit_code = -1;  // squeue: killed by SIGTERM
    job.info.state_text = "CANCELLED by 0";
    return;
  }
  if (job.polls_in_step >= job.steps[job.step].polls && job.step + 1 < job.steps.size()) {
    ++job.step;
    job.polls_in_step = 0;
    enter(job, job.steps[job.step]);
  }
  ++job.polls_in_step;
}

SlurmQuery FakeSlurmClient::query(const std::vector<std::string>& job_ids) {
  std::lock_guard lock(mutex_);
  ++queries_;
  now_ += seconds_per_query_;
  queried_.push_back(job_ids);
  SlurmQuery q;
  if (fail_queries_ > 0) {
    --fail_queries_;
    q.error = query_error_;
    return q;
  }
  q.accounting = accounting_;
  for (const auto& id : job_ids) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    Job& job = it->second;
    advance(job);
    if (job.final) ++job.polls_final;
    const bool in_squeue = !job.final || squeue_keeps_ < 0 || job.polls_final <= squeue_keeps_;
    if (in_squeue) {
      q.jobs[id] = job.info;
    } else if (accounting_) {
      SlurmJobInfo info = job.info;
      info.source = "sacct";
      info.restarts = 0;  // sacct has no restart count
      q.jobs[id] = info;
    }
  }
  return q;
}

std::string FakeSlurmClient::cancel(const std::string& job_id) {
  std::lock_guard lock(mutex_);
  cancelled_.push_back(job_id);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return "";  // like scancel: an unknown or purged job is no error here
  if (!it->second.final) it->second.cancel_requested = true;
  return "";
}

}  // namespace fk::orchestrator
