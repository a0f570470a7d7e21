#include "orchestrator/check.h"

#include "core/error.h"
#include "core/fs_util.h"
#include "core/spec/spec_file.h"
#include "core/subprocess.h"
#include "kernels/backends.h"
#include "kernels/candidate/manifest.h"
#include "kernels/candidate/sanitizer.h"
#include "orchestrator/check_tables.h"
#include "orchestrator/plan.h"
#include "orchestrator/supervise.h"

#include <algorithm>
#include <cctype>
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

// One pass of fk check: the jobs of one scale, planned from one campaign file and run
// by one supervised fk-runner.
struct CheckPass {
  std::string scale;
  bool model_stage = true;         // the whole model with the candidate swapped in
  std::vector<std::string> archs;  // as given (names or absolute paths)
  std::optional<Plan> plan;
};

// A spec reference as written: a name, or a path made absolute.
std::string spec_ref(const std::string& a) { return a.find('/') == std::string::npos ? a : fs::absolute(a).string(); }

std::string campaign_yaml(const CheckOptions& o, const std::vector<kernels::CandidateManifest>& manifests,
                          const std::string& specs, const CheckPass& pass) {
  std::string y = fmt::format(
      "kind: campaign\nname: check-{}\nscale: {}\nspecs_dir: {}\nseed: {}\nunfit_layouts: skip\nbackend: {}\n", pass.scale,
      pass.scale, yaml_quote(fs::absolute(specs).string()), o.seed, o.backend.empty() ? "cpu" : o.backend);
  y += "architectures:\n";
  for (const auto& a : pass.archs) y += fmt::format("  - {}\n", yaml_quote(a));
  const std::string dtype = o.dtype.empty() ? "" : fmt::format(", dtype: {}", o.dtype);
  y += "workloads:\n";
  if (o.workloads.empty()) {
    y += fmt::format("  - {{name: check-prefill, phase: prefill, batch: 2, seq_len: 32, decode_steps: 2{}}}\n", dtype);
    y += fmt::format("  - {{name: check-decode, phase: decode, batch: 4, seq_len: 24, decode_steps: 3{}}}\n", dtype);
  } else {
    for (const auto& w : o.workloads) y += fmt::format("  - {}\n", yaml_quote(spec_ref(w)));
  }
  y += "layouts: [" + (o.layouts.empty() ? std::string("tp1") : fmt::format("{}", fmt::join(o.layouts, ", "))) + "]\n";
  y += "candidate_sets:\n";
  for (const auto& m : manifests) y += fmt::format("  {}: {{{}: {}}}\n", m.name, m.op, yaml_quote(m.folder));
  // Without the model stage the baseline's own kernel stage is left out too: the jobs
  // are the candidates' gates at every shape of the published model.
  y += fmt::format(
      "kernel_stage: {{enabled: {}, warmup: {}, iterations: {}, rounds: {}, instance_time_limit: {}{}}}\n",
      pass.model_stage, o.warmup, o.iterations, o.rounds, static_cast<int64_t>(std::ceil(o.instance_time_limit_s)),
      o.sanitize.empty() ? "" : ", sanitize: " + o.sanitize);
  y += pass.model_stage ? "model_stage: {iterations: 2}\n" : "model_stage: {enabled: false}\n";
  return y;
}

// Whether a preset changes no size of the published model (its shapes are the same).
bool same_sizes(const spec::Architecture& preset, const spec::Architecture& full) {
  spec::Architecture p = preset;
  p.preset = full.preset;
  return spec::to_json(p) == spec::to_json(full);
}

}  // namespace

int check_run(const CheckOptions& given) {
  CheckOptions o = given;
  if (o.candidates.empty()) {
    fmt::print(stderr, "fk check: name at least one candidate folder\n");
    return 2;
  }
  if (!o.backend.empty() && !device_kind_parse(o.backend)) {
    fmt::print(stderr, "fk check: --backend: '{}' is not a backend (cpu or cuda)\n", o.backend);
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
  if (o.backend.empty()) {
    o.backend = "cpu";
    for (const auto& m : manifests) {
      if (m.backend == DeviceKind::kCpu) continue;
      const std::string why = kernels::backend_unavailable(m.backend, 0);
      if (why.empty()) {
        o.backend = std::string(device_kind_name(m.backend));
        break;
      }
      fmt::print("fk check: {} is a {} candidate and {}: it is built and checked for its manifest, not run "
                 "(--backend cpu)\n",
                 m.name, device_kind_name(m.backend), why);
    }
  }
  if (!o.sanitize.empty()) {
    if (!spec::sanitizer_tool_known(o.sanitize)) {
      fmt::print(stderr, "fk check: --sanitize: '{}' is not a compute-sanitizer tool ({})\n", o.sanitize,
                 fmt::join(spec::sanitizer_tools(), ", "));
      return 2;
    }
    if (o.backend == "cpu") {
      fmt::print(stderr, "fk check: --sanitize checks device code: it needs --backend cuda (CUDA candidates on a "
                         "machine with a GPU)\n");
      return 2;
    }
    std::string why;
    if (kernels::compute_sanitizer_path(&why).empty()) {
      fmt::print(stderr, "fk check: --sanitize: {}\n", why);
      return 2;
    }
    fmt::print("fk check: --sanitize: the candidates' workers run under compute-sanitizer {}: the gates at every "
               "shape, untimed; the model stage is left out\n",
               o.sanitize);
  }
  const std::string specs = o.specs_dir.empty() ? FK_SPECS_DIR : o.specs_dir;
  const std::string dir = fs::absolute(o.results_dir.empty() ? "fk-check/" + manifests[0].name : o.results_dir).string();
  fs::create_directories(dir);
  const std::vector<std::string> given_archs =
      o.archs.empty() ? std::vector<std::string>{"llama-3.1-8b", "qwen3-8b", "gemma-2-9b"} : o.archs;
  std::vector<std::string> scales;
  for (const auto& sc : o.scales.empty() ? std::vector<std::string>{"full", "tiny"} : o.scales) {
    const bool name_ok = !sc.empty() && std::all_of(sc.begin(), sc.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
    if (!name_ok || sc.front() == '.') {
      fmt::print(stderr, "fk check: --scale: '{}' is not a preset name (letters, digits, '_', '-', '.')\n", sc);
      return 2;
    }
    if (std::find(scales.begin(), scales.end(), sc) == scales.end()) scales.push_back(sc);
  }

  // The passes: each scale with the architectures that have it. Every campaign file is
  // written as YAML, so that it goes through the same validation as any.
  std::vector<CheckPass> passes;
  std::vector<std::pair<std::string, std::string>> notes;  // scale, note
  {
    // Load the architectures once to learn their presets (errors name the file).
    CheckPass probe{"full", false, {}, std::nullopt};
    for (const auto& a : given_archs) probe.archs.push_back(spec_ref(a));
    const std::string probe_file = dir + "/check-architectures.yaml";
    fs_write_file_atomic(probe_file, campaign_yaml(o, manifests, specs, probe));
    spec::Diagnostics diags;
    auto campaign = spec::campaign_load_file(probe_file, diags);
    if (!campaign) {
      fmt::print(stderr, "{}fk check: the checks cannot be planned (campaign written to {})\n", diags.to_string(),
                 probe_file);
      return 2;
    }
    fs::remove(probe_file);
    for (const auto& scale : scales) {
      CheckPass pass{scale, (scale != "full" || o.full_model) && o.sanitize.empty(), {}, std::nullopt};
      for (size_t i = 0; i < campaign->architectures.size(); ++i) {
        const auto& doc = campaign->architectures[i].doc;
        const auto preset = doc.select(scale);
        if (!preset) {
          notes.emplace_back(scale, fmt::format("{} has no preset '{}'", doc.full.name, scale));
          continue;
        }
        // A shape-only pass over sizes another pass runs whole would check the same shapes twice.
        const bool covered = !pass.model_stage && std::any_of(scales.begin(), scales.end(), [&](const std::string& s) {
          return s != scale && doc.select(s) && same_sizes(*doc.select(s), *preset);
        });
        if (covered) {
          notes.emplace_back(scale, fmt::format("{}: a smaller preset has the published sizes; its shapes are checked "
                                                "with the whole model",
                                                doc.full.name));
          continue;
        }
        pass.archs.push_back(probe.archs[i]);
      }
      if (!pass.archs.empty()) passes.push_back(std::move(pass));
    }
  }
  for (auto& pass : passes) {
    const std::string campaign_file = fmt::format("{}/check-{}.yaml", dir, pass.scale);
    fs_write_file_atomic(campaign_file, campaign_yaml(o, manifests, specs, pass));
    spec::Diagnostics diags;
    auto campaign = spec::campaign_load_file(campaign_file, diags);
    if (campaign) pass.plan = plan_campaign(*campaign, diags);
    if (!pass.plan) {
      fmt::print(stderr, "{}fk check: the checks cannot be planned (campaign written to {})\n", diags.to_string(),
                 campaign_file);
      return 2;
    }
    for (const auto& s : pass.plan->skipped)
      notes.emplace_back(pass.scale, fmt::format("skipped {} x {} x {}: {}", s.architecture, s.workload, s.layout,
                                                 fmt::join(s.reasons, "; ")));
  }
  for (const auto& [scale, note] : notes) fmt::print("fk check: {}: {}\n", scale, note);
  size_t total_jobs = 0;
  for (const auto& p : passes) total_jobs += p.plan->job_file.jobs.size();
  if (total_jobs == 0) {
    fmt::print(stderr, "fk check: no job fits; see the notes above\n");
    return 2;
  }

  const std::string results = dir + "/results";
  fs::create_directories(results);
  for (const auto& p : passes)
    for (const auto& j : p.plan->job_file.jobs) fs::remove(results + "/" + j.id + ".h5");  // this run's results only
  CheckTables tables;
  bool all_ok = true;
  int stopped_by = 0;
  for (const auto& pass : passes) {
    const auto& jobs = pass.plan->job_file.jobs;
    if (jobs.empty()) continue;
    if (stopped_by != 0) {  // a signal stopped an earlier pass: these jobs did not run
      for (const auto& job : jobs) check_tables_add(tables, job, pass.scale, pass.model_stage, results);
      continue;
    }
    // One supervised fk-runner for the pass's jobs, as fk run supervises an attempt:
    // its time limit is the sum of the jobs' limits (they may run one after the other),
    // silence beyond the heartbeat timeout stops it, SIGINT/SIGTERM stop it and nothing
    // is left running.
    LaunchRequest r;
    r.attempt_id = "check-" + pass.scale + ".a1";
    r.jobs_file = fmt::format("{}/jobs-{}.json", dir, pass.scale);
    spec::job_file_write(r.jobs_file, pass.plan->job_file);
    r.results_dir = results;
    r.time_limit_s = 0;
    for (const auto& j : jobs) {
      r.job_ids.push_back(j.id);
      r.ranks = std::max<int>(r.ranks, static_cast<int>(j.layout.ranks()));
      r.time_limit_s += j.time_limit_s;
      r.unbound = r.unbound || j.backend != DeviceKind::kCpu;
    }
    r.runner_args = {"--force"};
    r.log_file = fmt::format("{}/fk-runner-{}.log", dir, pass.scale);
    fs::remove(r.log_file);
    SuperviseOptions so;
    so.heartbeat_timeout_s = o.heartbeat_timeout_s > 0 ? o.heartbeat_timeout_s : spec::ExecutorSpec{}.heartbeat_timeout_s;
    so.on_line = [&](const std::string& line) {
      if (!o.quiet) fmt::print("  {}\n", line);
    };
    fmt::print("fk check: {} scale ({}): {} job(s) on {} rank(s); files in {}\n", pass.scale,
               pass.model_stage ? "gates at every shape, then the whole model with the candidate"
                                : "published sizes: gates at every shape the model calls",
               jobs.size(), r.ranks, dir);
    std::fflush(stdout);
    const SupervisedAttempt run = supervise_local(r, so);
    if (run.result.end != AttemptEnd::kSucceeded) {
      all_ok = false;
      const std::string why = run.signal != 0 ? fmt::format("stopped by {}", signal_name(run.signal))
                              : !run.result.reason.empty() ? run.result.reason
                                                           : std::string(attempt_end_name(run.result.end));
      std::string tail;
      if (o.quiet) {
        const std::string log = fs_read_file(r.log_file);
        tail = "; its output:\n" + log.substr(log.size() > 4000 ? log.size() - 4000 : 0);
      }
      fmt::print(stderr, "fk check: fk-runner did not finish every job ({}); log {}{}\n", why, r.log_file, tail);
      stopped_by = run.signal;
    }
    for (const auto& job : jobs) check_tables_add(tables, job, pass.scale, pass.model_stage, results);
  }
  std::fflush(stderr);
  return check_tables_print(tables, manifests, all_ok, stopped_by);
}

}  // namespace fk::orchestrator
