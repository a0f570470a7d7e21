#include "orchestrator/check.h"

#include "core/error.h"
#include "core/fs_util.h"
#include "core/spec/spec_file.h"
#include "core/subprocess.h"
#include "kernels/candidate/manifest.h"
#include "orchestrator/plan.h"
#include "orchestrator/supervise.h"
#include "results/h5/h5.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

#ifndef FK_SPECS_DIR
#define FK_SPECS_DIR "specs"
#endif

namespace fk::orchestrator {
namespace fs = std::filesystem;
namespace {

std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

std::string sci(double v) { return std::isfinite(v) ? fmt::format("{:.1e}", v) : "-"; }

struct Table {
  std::vector<std::vector<std::string>> rows;
  std::string str() const {
    std::vector<size_t> w;
    for (const auto& r : rows)
      for (size_t i = 0; i < r.size(); ++i) {
        if (w.size() <= i) w.push_back(0);
        w[i] = std::max(w[i], r[i].size());
      }
    std::string out;
    for (const auto& r : rows) {
      std::string line;
      for (size_t i = 0; i < r.size(); ++i)
        line += fmt::format("{:<{}}{}", r[i], i + 1 == r.size() ? 0 : w[i], i + 1 == r.size() ? "" : "  ");
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }
};

}  // namespace

int check_run(const CheckOptions& o) {
  if (o.candidates.empty()) {
    fmt::print(stderr, "fk check: name at least one candidate folder\n");
    return 2;
  }
  std::vector<kernels::CandidateManifest> manifests;
  for (const auto& folder : o.candidates) {
    spec::Diagnostics d;
    auto m = kernels::candidate_manifest_load(folder, d);
    if (!m) {
      fmt::print(stderr, "{}", d.to_string());
      return 2;
    }
    manifests.push_back(*m);
  }
  const std::string specs = o.specs_dir.empty() ? FK_SPECS_DIR : o.specs_dir;
  const std::string dir = fs::absolute(o.results_dir.empty() ? "fk-check/" + manifests[0].name : o.results_dir).string();
  fs::create_directories(dir);

  // The campaign, written as YAML so that it goes through the same validation as any.
  std::string y = fmt::format("kind: campaign\nname: check\nscale: {}\nspecs_dir: {}\nseed: {}\nunfit_layouts: skip\n",
                              o.scale, yaml_quote(fs::absolute(specs).string()), o.seed);
  const std::vector<std::string> archs =
      o.archs.empty() ? std::vector<std::string>{"llama-3.1-8b", "qwen3-8b", "gemma-2-9b"} : o.archs;
  y += "architectures:\n";
  for (const auto& a : archs)
    y += fmt::format("  - {}\n", yaml_quote(a.find('/') == std::string::npos ? a : fs::absolute(a).string()));
  const std::string dtype = o.dtype.empty() ? "" : fmt::format(", dtype: {}", o.dtype);
  y += "workloads:\n";
  if (o.workloads.empty()) {
    y += fmt::format("  - {{name: check-prefill, phase: prefill, batch: 2, seq_len: 32, decode_steps: 2{}}}\n", dtype);
    y += fmt::format("  - {{name: check-decode, phase: decode, batch: 4, seq_len: 24, decode_steps: 3{}}}\n", dtype);
  } else {
    for (const auto& w : o.workloads)
      y += fmt::format("  - {}\n", yaml_quote(w.find('/') == std::string::npos ? w : fs::absolute(w).string()));
  }
  y += "layouts: [" + (o.layouts.empty() ? std::string("tp1") : fmt::format("{}", fmt::join(o.layouts, ", "))) + "]\n";
  y += "candidate_sets:\n";
  for (size_t i = 0; i < manifests.size(); ++i)
    y += fmt::format("  {}: {{{}: {}}}\n", manifests[i].name, manifests[i].op, yaml_quote(manifests[i].folder));
  y += fmt::format("kernel_stage: {{warmup: {}, iterations: {}, rounds: {}, instance_time_limit: {}}}\n", o.warmup,
                   o.iterations, o.rounds, static_cast<int64_t>(std::ceil(o.instance_time_limit_s)));
  y += "model_stage: {iterations: 2}\n";
  const std::string campaign_file = dir + "/check-campaign.yaml";
  fs_write_file_atomic(campaign_file, y);

  spec::Diagnostics diags;
  auto campaign = spec::campaign_load_file(campaign_file, diags);
  std::optional<Plan> plan;
  if (campaign) plan = plan_campaign(*campaign, diags);
  if (!plan) {
    fmt::print(stderr, "{}fk check: the checks cannot be planned (campaign written to {})\n", diags.to_string(),
               campaign_file);
    return 2;
  }
  for (const auto& s : plan->skipped)
    fmt::print("fk check: skipped {} x {} x {}: {}\n", s.architecture, s.workload, s.layout, fmt::join(s.reasons, "; "));
  if (plan->job_file.jobs.empty()) {
    fmt::print(stderr, "fk check: no job fits; see the skipped combinations above\n");
    return 2;
  }
  const std::string jobs_file = dir + "/jobs.json";
  spec::job_file_write(jobs_file, plan->job_file);
  const std::string results = dir + "/results";
  // One supervised fk-runner for every job, as fk run supervises an attempt: its time
  // limit is the sum of the jobs' limits (they may run one after the other), silence
  // beyond the heartbeat timeout stops it, SIGINT/SIGTERM stop it and nothing is left.
  LaunchRequest r;
  r.attempt_id = "check.a1";
  r.jobs_file = jobs_file;
  r.results_dir = results;
  r.time_limit_s = 0;
  for (const auto& j : plan->job_file.jobs) {
    r.job_ids.push_back(j.id);
    r.ranks = std::max<int>(r.ranks, static_cast<int>(j.layout.ranks()));
    r.time_limit_s += j.time_limit_s;
    fs::remove(results + "/" + j.id + ".h5");  // the table shows this run's results only
  }
  r.runner_args = {"--force"};
  r.log_file = dir + "/fk-runner.log";
  fs::create_directories(results);
  fs::remove(r.log_file);
  SuperviseOptions so;
  so.heartbeat_timeout_s = o.heartbeat_timeout_s > 0 ? o.heartbeat_timeout_s : campaign->executor.heartbeat_timeout_s;
  so.on_line = [&](const std::string& line) {
    if (!o.quiet) fmt::print("  {}\n", line);
  };
  fmt::print("fk check: {} job(s) on {} rank(s); files in {}\n", plan->job_file.jobs.size(), r.ranks, dir);
  const SupervisedAttempt run = supervise_local(r, so);
  const bool runner_ok = run.result.end == AttemptEnd::kSucceeded;
  if (!runner_ok) {
    const std::string why = run.signal != 0 ? fmt::format("stopped by {}", signal_name(run.signal))
                            : !run.result.reason.empty() ? run.result.reason
                                                         : std::string(attempt_end_name(run.result.end));
    std::string tail;
    if (o.quiet) {
      const std::string log = fs_read_file(r.log_file);
      tail = "; its output:\n" + log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
    }
    fmt::print(stderr, "fk check: fk-runner did not finish every job ({}); log {}{}\n", why, r.log_file, tail);
  }

  // Read every job's candidate tables.
  Table kt;
  kt.rows.push_back({"ARCHITECTURE", "LAYOUT", "WORKLOAD", "CANDIDATE", "ROLE", "SHAPE", "DTYPE", "VERDICT",
                     "REL L2 CAND/BASE", "SPEEDUP", "REASON"});
  Table mt;
  mt.rows.push_back({"ARCHITECTURE", "LAYOUT", "WORKLOAD", "CANDIDATE", "VERDICT", "LAST-LAYER ERR CAND/BASE",
                     "TOP-1 CAND/BASE", "E2E", "KERNELS", "REASON"});
  // Every job file that exists, also when a later job failed or the runner was stopped.
  bool all_passed = runner_ok;
  int missing = 0;
  std::map<std::string, int> exercised;  // candidate -> jobs in which its op was called
  for (const auto& job : plan->job_file.jobs) {
    const std::string path = results + "/" + job.id + ".h5";
    if (!fs::exists(path)) {
      fmt::print(stderr, "fk check: job {} ({} {} {}) did not finish: no {}\n", job.id, job.arch.name,
                 job.layout.name(), job.workload.name, path);
      all_passed = false;
      ++missing;
      continue;
    }
    h5::File f = h5::File::open_read(path);
    const std::string arch = job.arch.name, layout = job.layout.name(), wl = job.workload.name;
    if (f.exists("candidates/instances")) {
      h5::Table t = f.read_table("candidates/instances");
      for (size_t i = 0; i < t.rows(); ++i) {
        if (t.column<int64_t>("rank")[i] != 0 && i > 0 && t.column<std::string>("shape")[i] == t.column<std::string>("shape")[i - 1])
          continue;
        const double sp = t.column<double>("speedup")[i];
        kt.rows.push_back({arch, layout, wl, t.column<std::string>("candidate")[i], t.column<std::string>("role")[i],
                           t.column<std::string>("shape")[i], t.column<std::string>("dtype")[i],
                           t.column<std::string>("verdict")[i],
                           fmt::format("{} / {}", sci(t.column<double>("rel_l2")[i]),
                                       sci(t.column<double>("baseline_rel_l2")[i])),
                           sp > 0 ? fmt::format("{:.2f}x", sp) : "-", t.column<std::string>("reason")[i]});
      }
    }
    h5::Table s = f.read_table("candidates/summary");
    for (size_t i = 0; i < s.rows(); ++i) {
      const std::string name = s.column<std::string>("candidate")[i];
      const bool used = s.column<bool>("exercised")[i] ||
                        s.column<std::string>("reason")[i].rfind("the model has no", 0) != 0;
      exercised[name] += used;
      const std::string verdict = used ? s.column<std::string>("verdict")[i] : "NOT USED";
      if (used) all_passed = all_passed && verdict == "PASSED";
      const double e2e = s.column<double>("e2e_speedup")[i], ks = s.column<double>("kernel_speedup_geomean")[i];
      const double t1 = s.column<double>("top1_vs_fp32")[i], bt1 = s.column<double>("baseline_top1_vs_fp32")[i];
      mt.rows.push_back(
          {arch, layout, wl, s.column<std::string>("candidate")[i], verdict,
           fmt::format("{} / {}", sci(s.column<double>("model_rel_err")[i]),
                       sci(s.column<double>("baseline_model_rel_err")[i])),
           std::isfinite(t1) ? fmt::format("{:.0f}% / {:.0f}%", 100 * t1, 100 * bt1) : "-",
           std::isfinite(e2e) ? fmt::format("{:.2f}x", e2e) : "-", std::isfinite(ks) ? fmt::format("{:.2f}x", ks) : "-",
           s.column<std::string>("reason")[i]});
      if (!s.column<bool>("compiled")[i])
        fmt::print("\n{} did not build:\n  {}\n{}\n", s.column<std::string>("candidate")[i],
                   s.column<std::string>("compile_command")[i], f.open_group("candidates/compile_logs")
                                                                     .attr<std::string>(s.column<std::string>("candidate")[i]));
    }
  }
  fmt::print("\nop instances (every shape the models produce, fresh inputs each round):\n{}", kt.str());
  fmt::print("\nper job (candidate swapped into the whole model):\n{}", mt.str());
  for (const auto& m : manifests)
    if (exercised[m.name] == 0 && missing == 0) {
      fmt::print("fk check: {}'s op '{}' does not occur in these architectures, layouts and workloads\n", m.name, m.op);
      all_passed = false;
    }
  fmt::print("\nfk check: {}\n", all_passed  ? "every candidate PASSED where its op occurs"
                                  : missing > 0 ? fmt::format("{} job(s) did not finish", missing)
                                                : "some verdicts are not PASSED");
  if (run.signal != 0) return 128 + run.signal;
  return all_passed ? 0 : 1;
}

}  // namespace fk::orchestrator
