#include "orchestrator/check_tables.h"

#include "results/campaign/text_table.h"
#include "results/h5/h5.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

namespace fk::orchestrator {
namespace fs = std::filesystem;
namespace {

using results::fmt_sci;

std::string table_text(const std::vector<std::vector<std::string>>& rows) {
  results::TextTable t(rows.front());
  for (size_t i = 1; i < rows.size(); ++i) t.add(rows[i]);
  return t.str(0);
}

void ensure_headers(CheckTables& t) {
  if (t.instances.empty())
    t.instances.push_back({"ARCHITECTURE", "SCALE", "LAYOUT", "WORKLOAD", "CANDIDATE", "ROLE", "SHAPE", "DTYPE",
                           "VERDICT", "REL L2 CAND/BASE", "SPEEDUP", "REASON"});
  if (t.jobs.empty())
    t.jobs.push_back({"ARCHITECTURE", "SCALE", "LAYOUT", "WORKLOAD", "CANDIDATE", "VERDICT",
                      "LAST-LAYER ERR CAND/BASE", "TOP-1 CAND/BASE", "E2E", "KERNELS", "REASON"});
}

}  // namespace

void check_tables_add(CheckTables& t, const spec::Job& job, const std::string& scale, bool model_stage,
                      const std::string& results_dir) {
  ensure_headers(t);
  const std::string path = results_dir + "/" + job.id + ".h5";
  if (!fs::exists(path)) {
    fmt::print(stderr, "fk check: job {} ({} {} {} {}) did not finish: no {}\n", job.id, job.arch.name, scale,
               job.layout.name(), job.workload.name, path);
    t.all_passed = false;
    ++t.missing;
    return;
  }
  t.shapes_only = t.shapes_only || !model_stage;
  h5::File f = h5::File::open_read(path);
  const std::string arch = job.arch.name, layout = job.layout.name(), wl = job.workload.name;
  if (f.exists("candidates/instances")) {
    h5::Table it = f.read_table("candidates/instances");
    for (size_t i = 0; i < it.rows(); ++i) {
      if (it.column<int64_t>("rank")[i] != 0 && i > 0 &&
          it.column<std::string>("shape")[i] == it.column<std::string>("shape")[i - 1])
        continue;
      const double sp = it.column<double>("speedup")[i];
      t.instances.push_back({arch, scale, layout, wl, it.column<std::string>("candidate")[i],
                             it.column<std::string>("role")[i], it.column<std::string>("shape")[i],
                             it.column<std::string>("dtype")[i], it.column<std::string>("verdict")[i],
                             fmt::format("{} / {}", fmt_sci(it.column<double>("rel_l2")[i]),
                                         fmt_sci(it.column<double>("baseline_rel_l2")[i])),
                             sp > 0 ? fmt::format("{:.2f}x", sp) : "-", it.column<std::string>("reason")[i]});
    }
  }
  h5::Table s = f.read_table("candidates/summary");
  for (size_t i = 0; i < s.rows(); ++i) {
    const std::string name = s.column<std::string>("candidate")[i];
    const bool used =
        s.column<bool>("exercised")[i] || s.column<std::string>("reason")[i].rfind("the model has no", 0) != 0;
    t.exercised[name] += used;
    const std::string verdict = used ? s.column<std::string>("verdict")[i] : "NOT USED";
    if (used) t.all_passed = t.all_passed && verdict == "PASSED";
    const double e2e = s.column<double>("e2e_speedup")[i], ks = s.column<double>("kernel_speedup_geomean")[i];
    const double t1 = s.column<double>("top1_vs_fp32")[i], bt1 = s.column<double>("baseline_top1_vs_fp32")[i];
    t.jobs.push_back({arch, scale, layout, wl, name, verdict,
                      model_stage ? fmt::format("{} / {}", fmt_sci(s.column<double>("model_rel_err")[i]),
                                                fmt_sci(s.column<double>("baseline_model_rel_err")[i]))
                                  : "(shapes only)",
                      std::isfinite(t1) ? fmt::format("{:.0f}% / {:.0f}%", 100 * t1, 100 * bt1) : "-",
                      std::isfinite(e2e) ? fmt::format("{:.2f}x", e2e) : "-",
                      std::isfinite(ks) ? fmt::format("{:.2f}x", ks) : "-", s.column<std::string>("reason")[i]});
    if (!s.column<bool>("compiled")[i])
      t.compile_logs.push_back(fmt::format("{} did not build:\n  {}\n{}", name, s.column<std::string>("compile_command")[i],
                                           f.open_group("candidates/compile_logs").attr<std::string>(name)));
  }
}

int check_tables_print(const CheckTables& t, const std::vector<kernels::CandidateManifest>& manifests, bool runner_ok,
                       int signal) {
  CheckTables shown = t;
  ensure_headers(shown);
  // A candidate that does not build fails the same way in every job: its log once.
  std::vector<std::string> logs = t.compile_logs;
  logs.erase(std::unique(logs.begin(), logs.end()), logs.end());
  for (const auto& l : logs) fmt::print("\n{}\n", l);
  fmt::print("\nop instances (every shape the models produce, fresh inputs each round):\n{}",
             table_text(shown.instances));
  fmt::print("\nper job (candidate swapped into the whole model):\n{}", table_text(shown.jobs));
  if (t.shapes_only)
    fmt::print("(shapes only: at the published sizes the gates ran at every shape the model calls, without running "
               "the model; --full-model runs the whole model there too)\n");
  bool all_passed = runner_ok && t.all_passed;
  for (const auto& m : manifests) {
    auto it = t.exercised.find(m.name);
    if ((it == t.exercised.end() || it->second == 0) && t.missing == 0) {
      fmt::print("fk check: {}'s op '{}' does not occur in these architectures, layouts and workloads\n", m.name, m.op);
      all_passed = false;
    }
  }
  fmt::print("\nfk check: {}\n", all_passed    ? "every candidate PASSED where its op occurs"
                                  : t.missing > 0 ? fmt::format("{} job(s) did not finish", t.missing)
                                                  : "some verdicts are not PASSED");
  if (signal != 0) return 128 + signal;
  return all_passed ? 0 : 1;
}

}  // namespace fk::orchestrator
