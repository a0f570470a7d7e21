#include "orchestrator/slurm/slurm_cli_client.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <sstream>

namespace fk::orchestrator {
namespace {

double steady_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

std::string trim(std::string s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  const size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

int to_int(const std::string& s, int fallback) {
  try {
    size_t used = 0;
    const int v = std::stoi(s, &used);
    return used == s.size() ? v : fallback;
  } catch (...) {
    return fallback;
  }
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// "exit:signal" (sacct, newer squeue) or a wait status (squeue 22.05) -> exit code, signal.
void parse_exit(const std::string& text, SlurmJobInfo& info) {
  const std::string t = trim(text);
  if (t.empty() || t == "N/A") return;
  const size_t colon = t.find(':');
  if (colon != std::string::npos) {
    info.exit_code = to_int(t.substr(0, colon), -1);
    info.signal = to_int(t.substr(colon + 1), 0);
    return;
  }
  const int status = to_int(t, -1);
  if (status < 0) return;
  info.signal = status & 0x7f;
  info.exit_code = info.signal != 0 ? -1 : (status >> 8) & 0xff;
}

// One-line summary of a command's complaint.
std::string complaint(const SubprocessResult& r) {
  std::string text = trim(r.error_output.empty() ? r.output : r.error_output + " " + r.output);
  for (char& c : text)
    if (c == '\n') c = ' ';
  if (text.size() > 400) text = text.substr(0, 400) + "...";
  if (!r.started) return r.error;
  if (r.timed_out)
    return fmt::format("no answer within the time limit ({}){}", r.describe(), text.empty() ? "" : ": " + text);
  return text.empty() ? r.describe() : fmt::format("{} ({})", text, r.describe());
}

}  // namespace

const char* const kSlurmSqueueFormat = "JobID:|,State:|,Reason:|,exit_code:|,RestartCnt:|";

std::map<std::string, SlurmJobInfo> slurm_parse_squeue(const std::string& output) {
  std::map<std::string, SlurmJobInfo> jobs;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const auto f = split(trim(line), '|');
    if (f.size() < 5 || trim(f[0]).empty()) continue;
    SlurmJobInfo info;
    info.job_id = trim(f[0]);
    info.state_text = trim(f[1]);
    info.state = slurm_state_parse(info.state_text);
    info.reason = trim(f[2]);
    parse_exit(f[3], info);
    info.restarts = to_int(trim(f[4]), 0);
    info.source = "squeue";
    // Only final states carry a meaningful exit code.
    if (!slurm_state_final(info.state)) info.exit_code = -1, info.signal = 0;
    jobs[info.job_id] = info;
  }
  return jobs;
}

std::map<std::string, SlurmJobInfo> slurm_parse_sacct(const std::string& output) {
  std::map<std::string, SlurmJobInfo> jobs;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    const auto f = split(trim(line), '|');
    if (f.size() < 3 || trim(f[0]).empty()) continue;
    const std::string id = trim(f[0]);
    if (id.find('.') != std::string::npos) continue;  // a step ("123.batch", "123.0")
    SlurmJobInfo info;
    info.job_id = id;
    info.state_text = trim(f[1]);
    info.state = slurm_state_parse(info.state_text);
    parse_exit(f[2], info);
    if (f.size() > 3) info.reason = trim(f[3]);
    info.source = "sacct";
    jobs[id] = info;
  }
  return jobs;
}

std::string slurm_parse_sbatch(const std::string& output) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    std::string id = trim(line.substr(0, line.find(';')));
    if (!id.empty() && id.find_first_not_of("0123456789_") == std::string::npos) return id;
  }
  return "";
}

bool slurm_sacct_unavailable(const std::string& output) {
  return has(output, "accounting storage is disabled") || has(output, "slurmdbd") ||
         has(output, "Problem talking to the database") || has(output, "Connection refused") ||
         has(output, "accounting_storage/none");
}

SlurmCliClient::SlurmCliClient(SlurmCliOptions options, SlurmCommandRunner runner)
    : o_(std::move(options)), runner_(runner ? std::move(runner) : SlurmCommandRunner(subprocess_run)) {}

SubprocessResult SlurmCliClient::run(const std::vector<std::string>& argv, double timeout_s) const {
  SubprocessOptions so;
  so.timeout_s = timeout_s;
  so.merge_stderr = false;
  so.max_output_bytes = size_t{4} << 20;
  return runner_(argv, so);
}

SlurmSubmitResult SlurmCliClient::submit(const SlurmSubmit& request) {
  SlurmSubmitResult out;
  const SubprocessResult r = run({o_.sbatch, "--parsable", request.script_path}, o_.submit_timeout_s);
  if (r.ok()) out.job_id = slurm_parse_sbatch(r.output);
  if (out.ok()) return out;
  out.error = r.ok() ? fmt::format("sbatch printed no job id: '{}'", trim(r.output)) : "sbatch: " + complaint(r);
  const std::string all = r.output + r.error_output;
  out.transient = r.timed_out || has(all, "Unable to contact slurm controller") || has(all, "Socket timed out") ||
                  has(all, "Zero Bytes were transmitted") || has(all, "Resource temporarily unavailable");
  return out;
}

SlurmQuery SlurmCliClient::query(const std::vector<std::string>& job_ids) {
  SlurmQuery q;
  if (job_ids.empty()) return q;
  const std::string ids = fmt::format("{}", fmt::join(job_ids, ","));
  const SubprocessResult r =
      run({o_.squeue, "--noheader", "--states=all", "--jobs=" + ids, "-O", kSlurmSqueueFormat}, o_.query_timeout_s);
  // squeue exits 1 with "Invalid job id specified" when it knows none of the ids.
  const bool none_known = r.started && !r.timed_out && has(r.error_output + r.output, "Invalid job id");
  if (!r.ok() && !none_known) {
    q.error = "squeue: " + complaint(r);
    return q;
  }
  if (r.ok()) q.jobs = slurm_parse_squeue(r.output);

  std::vector<std::string> missing;
  for (const auto& id : job_ids)
    if (!q.jobs.count(id)) missing.push_back(id);
  std::lock_guard lock(mutex_);
  if (!sacct_ok_ && steady_now() - sacct_failed_at_ >= o_.sacct_recheck_s) sacct_ok_ = true;
  q.accounting = sacct_ok_;
  if (missing.empty() || !sacct_ok_) return q;
  const SubprocessResult a =
      run({o_.sacct, "--noheader", "--parsable2", "--allocations", "--format=JobIDRaw,State,ExitCode,Reason",
           fmt::format("--jobs={}", fmt::join(missing, ","))},
          o_.query_timeout_s);
  if (!a.ok()) {
    // Not installed, no accounting, no slurmdbd: remember, and rely on the attempt's files.
    if (!a.started || slurm_sacct_unavailable(a.output + a.error_output)) {
      sacct_ok_ = false;
      sacct_failed_at_ = steady_now();
      sacct_error_ = complaint(a);
      q.accounting = false;
      return q;
    }
    q.complete = false;  // a passing failure: ask again next poll
    return q;
  }
  for (auto& [id, info] : slurm_parse_sacct(a.output))
    if (!q.jobs.count(id)) q.jobs[id] = info;
  return q;
}

std::string SlurmCliClient::cancel(const std::string& job_id) {
  const SubprocessResult r = run({o_.scancel, job_id}, o_.cancel_timeout_s);
  if (r.ok()) return "";
  const std::string all = r.output + r.error_output;
  if (has(all, "Invalid job id") || has(all, "already completing or completed")) return "";
  return "scancel " + job_id + ": " + complaint(r);
}

}  // namespace fk::orchestrator
