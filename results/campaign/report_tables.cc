#include "results/campaign/report_tables.h"

#include "core/spec/memory.h"
#include "results/campaign/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace fk::results {
namespace {

ReportTable finish(std::string title, ReportTable t) {
  t.title = std::move(title);
  return t;
}

}  // namespace

std::vector<const JobDigest*> report_sorted_jobs(const ReportData& data) {
  std::vector<const JobDigest*> jobs;
  for (const JobDigest& d : data.jobs) jobs.push_back(&d);
  std::sort(jobs.begin(), jobs.end(), [](const JobDigest* a, const JobDigest* b) {
    const JobKeys &x = a->keys, &y = b->keys;
    return std::tie(x.architecture, x.workload, x.tp, x.pp, x.dp, x.candidate_set, x.repetition, x.job_id) <
           std::tie(y.architecture, y.workload, y.tp, y.pp, y.dp, y.candidate_set, y.repetition, y.job_id);
  });
  return jobs;
}

std::string report_verdict_counts(const std::map<std::string, int64_t>& verdicts) {
  std::string s;
  for (const auto& [v, n] : verdicts) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", v, n);
  return s.empty() ? "-" : s;
}

std::string report_score_line(const Score& s) {
  if (!s.defined()) return "score: n/a (baseline-only campaign: no candidate kernels to score)";
  return fmt::format("score = G x C x V = {} x {} x {} = {:.3f}   ({} items, {} applicable, {} PASSED)",
                     fmt_fixed(s.geomean_credit, 3), fmt_fixed(s.correctness, 3), fmt_fixed(s.coverage, 3),
                     std::isfinite(s.score) ? s.score : 0.0, s.items, s.applicable, s.passed);
}

std::vector<ReportTable> report_tables(const ReportData& data) {
  std::vector<ReportTable> tables;
  const bool cand = data.has_candidates();
  {
    std::vector<std::string> header = {"ARCHITECTURE", "OP", "JOBS", "INSTANCES", "PASSED", "MAX REL L2 (fp64)",
                                       "BASELINE TIME/STEP"};
    if (cand) header.insert(header.end(), {"VERDICTS", "KERNEL SPEEDUP", "E2E CREDITED"});
    ReportTable t{"", header, {}};
    for (const ArchOpRow& r : data.arch_ops) {
      std::vector<std::string> row = {r.architecture,
                                      r.op,
                                      std::to_string(r.jobs),
                                      std::to_string(r.instances),
                                      fmt::format("{}/{}", r.passed, r.instances),
                                      fmt_sci(r.max_rel_l2),
                                      fmt_seconds(r.step_s)};
      if (cand)
        row.insert(row.end(), {report_verdict_counts(r.verdicts), fmt_speedup(r.kernel_speedup), fmt_speedup(r.e2e_speedup)});
      t.rows.push_back(std::move(row));
    }
    tables.push_back(finish("Kernels per architecture and op (kernel stage; precision of the baseline against the fp64 reference)", t));
  }
  {
    std::vector<std::string> header = {"ARCHITECTURE", "WORKLOAD", "LAYOUT", "STATUS", "MODEL TIME", "COMPUTE", "COMM",
                                       "COMM %", "VS 1 RANK", "LAST-LAYER ERR", "TOP-1", "KL", "PEAK MEM", "OF ESTIMATE"};
    if (cand) header.insert(header.end(), {"SET", "E2E", "SELECTED ERR"});
    ReportTable t{"", header, {}};
    for (const JobDigest* d : report_sorted_jobs(data)) {
      const RunFigures& b = d->baseline;
      const double comm_frac = b.mean_rank_s > 0 ? b.comm_s / b.mean_rank_s : std::nan("");
      std::vector<std::string> row = {d->keys.architecture, d->keys.workload, d->keys.layout, d->status,
                                      fmt_seconds(b.model_s), fmt_seconds(b.compute_s), fmt_seconds(b.comm_s),
                                      fmt_percent(comm_frac), fmt_speedup(report_layout_speedup(data, *d)),
                                      fmt_sci(b.last_layer_err), fmt_percent(b.top1), fmt_sci(b.kl),
                                      d->peak_memory_bytes > 0 ? spec::bytes_human(d->peak_memory_bytes) : "-",
                                      d->peak_memory_bytes > 0 && d->memory_estimate_bytes > 0
                                          ? fmt_percent(static_cast<double>(d->peak_memory_bytes) /
                                                        static_cast<double>(d->memory_estimate_bytes))
                                          : "-"};
      if (cand)
        row.insert(row.end(), {d->keys.candidate_set.empty() ? "-" : d->keys.candidate_set, fmt_speedup(d->e2e_speedup),
                               fmt_sci(d->selected.last_layer_err)});
      t.rows.push_back(std::move(row));
    }
    tables.push_back(finish("Model stage per job (baseline run: time of prefill + decode steps, compute vs communication, "
                            "error vs the fp32 run; peak memory of the fullest rank and run, and its share of the "
                            "planner's estimate)", t));
  }
  // Families and FastKernels categories: the same figures over each group's jobs.
  auto group_table = [&](const char* what, const std::vector<GroupRow>& groups) {
    std::vector<std::string> header = {what, "ARCHS", "JOBS", "KERNELS PASSED", "GEOMEAN LAST-LAYER ERR"};
    if (cand) header.insert(header.end(), {"ITEMS", "PASSED", "GEOMEAN E2E CREDITED", "GEOMEAN E2E PASSED", "SCORE"});
    ReportTable t{"", header, {}};
    for (const GroupRow& g : groups) {
      std::vector<std::string> row = {g.name.empty() ? "-" : g.name, std::to_string(g.architectures),
                                      std::to_string(g.jobs), fmt::format("{}/{}", g.kernels_passed, g.kernel_instances),
                                      g.jobs > 0 ? fmt_sci(g.geomean_baseline_err) : "-"};
      if (cand)
        row.insert(row.end(), {std::to_string(g.score.items), fmt::format("{}/{}", g.score.passed, g.score.applicable),
                               fmt_speedup(g.score.geomean_credit), fmt_speedup(g.score.geomean_passed),
                               g.score.defined() ? fmt_fixed(g.score.score, 3) : "-"});
      t.rows.push_back(std::move(row));
    }
    return t;
  };
  tables.push_back(finish("Geometric means per family", group_table("FAMILY", report_families(data))));
  tables.push_back(finish("Geometric means per FastKernels category (the 8 of arXiv 2605.23215; 0 jobs: not covered "
                          "by this campaign)",
                          group_table("CATEGORY", report_categories(data))));
  if (cand) {
    ReportTable t{"",
                  {"ARCHITECTURE", "WORKLOAD", "LAYOUT", "CANDIDATE", "OP", "VERDICT", "E2E", "KERNELS", "ERR CAND/BASE",
                   "REASON"},
                  {}};
    std::vector<const ScoreItem*> items;
    for (const ScoreItem& it : data.items) items.push_back(&it);
    std::stable_sort(items.begin(), items.end(), [](const ScoreItem* a, const ScoreItem* b) {
      return std::tie(a->job.architecture, a->job.workload, a->job.tp, a->job.pp, a->job.dp, a->candidate) <
             std::tie(b->job.architecture, b->job.workload, b->job.tp, b->job.pp, b->job.dp, b->candidate);
    });
    for (const ScoreItem* it : items)
      t.rows.push_back({it->job.architecture, it->job.workload, it->job.layout, it->candidate, it->op,
             it->applicable() ? it->verdict : it->verdict + " (op absent)", fmt_speedup(it->e2e_speedup), fmt_speedup(it->kernel_speedup),
             fmt::format("{} / {}", fmt_sci(it->model_rel_err), fmt_sci(it->baseline_model_rel_err)),
             it->reason.size() > 60 ? it->reason.substr(0, 57) + "..." : it->reason});
    tables.push_back(finish("Candidates per job", t));
  }
  return tables;
}

}  // namespace fk::results
