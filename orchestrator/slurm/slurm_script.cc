#include "orchestrator/slurm/slurm_script.h"

#include "orchestrator/slurm/attempt_files.h"

#include "core/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#ifndef FK_SLURM_TEMPLATES_DIR
#define FK_SLURM_TEMPLATES_DIR "slurm/templates"
#endif

namespace fk::orchestrator {
namespace {

bool is_shell_safe(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("_./:=@%+,-").find(c) != std::string_view::npos;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {  // appended piece by piece (GCC 12 -O3 -Werror=restrict on "x" + string)
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

int line_of(const std::string& text, size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// Calls on_name(name, position) for each {{name}} in `text`.
template <typename F>
void scan(const std::string& text, const std::string& name, F on_name) {
  size_t pos = 0;
  while ((pos = text.find("{{", pos)) != std::string::npos) {
    const size_t end = text.find("}}", pos + 2);
    const size_t nl = text.find('\n', pos);
    if (end == std::string::npos || (nl != std::string::npos && nl < end))
      fail(ErrorKind::kInvalidArgument, "{}:{}: '{{{{' without a closing '}}}}' on the same line", name,
           line_of(text, pos));
    on_name(text.substr(pos + 2, end - pos - 2), pos, end + 2);
    pos = end + 2;
  }
}

}  // namespace

std::string shell_quote(const std::string& text) {
  if (!text.empty() && std::all_of(text.begin(), text.end(), is_shell_safe)) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurm_time_limit(double seconds) {
  if (seconds <= 0) return "UNLIMITED";
  const int64_t minutes = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(seconds / 60.0 - 1e-9)));
  return fmt::format("{}:{:02}:00", minutes / 60, minutes % 60);
}

std::string slurm_job_name(const std::string& attempt_id) {
  std::string name = "fk-" + attempt_id;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return name;
}

std::vector<std::string> slurm_runner_command(const LaunchRequest& r, const std::string& runner) {
  std::vector<std::string> cmd = {runner, "--jobs", r.jobs_file, "--results", r.results_dir};
  if (!r.job_ids.empty()) {
    std::string ids;
    for (const auto& id : r.job_ids) ids += (ids.empty() ? "" : ",") + id;
    cmd.insert(cmd.end(), {"--only", ids});
  }
  cmd.insert(cmd.end(), {"--attempt", r.attempt_id});
  if (!r.heartbeat.empty()) cmd.insert(cmd.end(), {"--heartbeat", r.heartbeat});
  if (!r.heartbeat.empty() && r.heartbeat_interval_s > 0)
    cmd.insert(cmd.end(), {"--heartbeat-interval", fmt::format("{:g}", r.heartbeat_interval_s)});
  cmd.insert(cmd.end(), r.runner_args.begin(), r.runner_args.end());
  return cmd;
}

SlurmScriptValues slurm_script_values(const LaunchRequest& r, const SlurmScriptSettings& s,
                                      const std::string& attempt_dir) {
  std::vector<std::string> srun = {s.srun};
  if (!s.mpi.empty()) srun.push_back("--mpi=" + s.mpi);
  srun.push_back(fmt::format("--ntasks={}", r.ranks));
  srun.push_back("--kill-on-bad-exit=1");
  srun.insert(srun.end(), s.srun_args.begin(), s.srun_args.end());

  std::string directives;
  auto directive = [&](const std::string& arg) {
    if (!directives.empty()) directives += '\n';
    directives.append("#SBATCH ").append(arg);
  };
  if (!s.slurm.partition.empty()) directive("--partition=" + s.slurm.partition);
  if (!s.slurm.account.empty()) directive("--account=" + s.slurm.account);
  if (!s.slurm.qos.empty()) directive("--qos=" + s.slurm.qos);
  if (s.slurm.nodes > 0) directive(fmt::format("--nodes={}", s.slurm.nodes));
  if (s.slurm.gpus_per_node > 0) directive(fmt::format("--gpus-per-node={}", s.slurm.gpus_per_node));
  directive(s.requeue ? "--requeue" : "--no-requeue");
  for (const auto& a : s.slurm.sbatch_args) directive(a);

  const std::string log = r.log_file.empty() ? attempt_dir + "/slurm.log" : r.log_file;
  SlurmScriptValues v;
  v.values = {
      {"attempt_id", r.attempt_id},
      {"attempt_id_sh", shell_quote(r.attempt_id)},
      {"job_name", slurm_job_name(r.attempt_id)},
      {"ntasks", std::to_string(r.ranks)},
      {"time_limit", slurm_time_limit(r.time_limit_s)},
      {"time_limit_s", fmt::format("{:.0f}", r.time_limit_s)},
      {"log_file", log},
      {"work_dir", attempt_dir},
      {"attempt_dir", attempt_dir},
      {"attempt_dir_sh", shell_quote(attempt_dir)},
      {"sbatch_directives", directives},
      {"srun_sh", join_words(srun)},
      {"runner_command_sh", join_words(slurm_runner_command(r, s.runner))},
      {"rank_mark_sh", join_words({"/bin/sh", "-c", ": > \"$0/rank.${SLURM_PROCID:-0}\" && exec \"$@\"",
                                   AttemptFiles{attempt_dir}.ranks()})},
      {"step_not_launched_exit", std::to_string(kSlurmStepNotLaunchedExit)},
  };
  return v;
}

const std::vector<std::string>& slurm_template_placeholders() {
  static const std::vector<std::string> names = {
      "attempt_id",        "attempt_id_sh", "job_name",          "ntasks",       "time_limit",
      "time_limit_s",      "log_file",      "work_dir",          "attempt_dir",  "attempt_dir_sh",
      "sbatch_directives", "srun_sh",       "runner_command_sh", "rank_mark_sh", "step_not_launched_exit"};
  return names;
}

void slurm_template_check(const std::string& text, const std::string& name) {
  const auto& known = slurm_template_placeholders();
  if (text.rfind("#!", 0) != 0) fail(ErrorKind::kInvalidArgument, "{}: a batch script must start with #!", name);
  scan(text, name, [&](const std::string& key, size_t pos, size_t) {
    if (std::find(known.begin(), known.end(), key) == known.end())
      fail(ErrorKind::kInvalidArgument, "{}:{}: unknown placeholder {{{{{}}}}} (known: {})", name, line_of(text, pos),
           key, fmt::join(known, ", "));
  });
}

std::string slurm_template_render(const std::string& text, const std::string& name, const SlurmScriptValues& v) {
  slurm_template_check(text, name);
  std::string out;
  size_t copied = 0;
  scan(text, name, [&](const std::string& key, size_t pos, size_t end) {
    const auto it = v.values.find(key);
    if (it == v.values.end())
      fail(ErrorKind::kInternal, "{}:{}: no value for {{{{{}}}}}", name, line_of(text, pos), key);
    if (key != "sbatch_directives" && it->second.find_first_of("\n\r") != std::string::npos)
      fail(ErrorKind::kInvalidArgument, "{}:{}: the value of {{{{{}}}}} spans lines: '{}'", name, line_of(text, pos),
           key, it->second);
    const size_t nl = pos == 0 ? std::string::npos : text.rfind('\n', pos - 1);
    const size_t line_start = nl == std::string::npos ? 0 : nl + 1;
    if (text.compare(line_start, 7, "#SBATCH") == 0 && it->second.find_first_of(" \t") != std::string::npos &&
        key != "sbatch_directives")
      fail(ErrorKind::kInvalidArgument, "{}:{}: {{{{{}}}}} is used in an #SBATCH line but its value has spaces: '{}'",
           name, line_of(text, pos), key, it->second);
    out.append(text, copied, pos - copied);
    out += it->second;
    copied = end;
  });
  out.append(text, copied, std::string::npos);
  return out;
}

std::string slurm_default_template() {
  if (const char* dir = std::getenv("FK_SLURM_TEMPLATES"); dir && *dir) return std::string(dir) + "/attempt.sbatch";
  return std::string(FK_SLURM_TEMPLATES_DIR) + "/attempt.sbatch";
}

}  // namespace fk::orchestrator
