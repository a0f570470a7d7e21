#include "orchestrator/plan.h"

#include "core/error.h"
#include "core/safetensors.h"
#include "core/spec/family.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fk::orchestrator {

using namespace fk::spec;

std::optional<Plan> plan_campaign(const Campaign& c, Diagnostics& diags) {
  const size_t before = diags.items().size();
  Plan plan;
  plan.job_file.campaign = c.name;
  plan.job_file.campaign_file = c.file;
  plan.job_file.scale = c.scale;
  size_t reserve = c.architectures.size() * c.workloads.size() * c.layouts.size() * c.candidate_sets.size() *
                   static_cast<size_t>(c.repetitions);
  plan.job_file.jobs.reserve(reserve);
  for (const auto& aref : c.architectures) {
    const auto arch = aref.doc.select(c.scale);
    if (!arch) continue;  // reported when the campaign was parsed
    if (!arch->checkpoint.empty()) {
      // Every header of the checkpoint now (each rank checks the tensors it loads): a
      // missing or broken checkpoint is an error of the plan rather than of every job.
      try {
        const Checkpoint ckpt(arch->checkpoint);
        for (const auto& name : ckpt.names()) (void)ckpt.file_of(name);
      } catch (const Error& e) {
        const SourceMap& where = aref.doc.where;
        diags.error(where.has("checkpoint") ? where.at("checkpoint") : aref.pos, "checkpoint",
                    fmt::format("{}: {}", arch->name, e.what()));
        continue;
      }
    }
    const std::string arch_part = job_id_part(*arch);
    for (const auto& wref : c.workloads) {
      // Workloads without the campaign's preset run at their published values, and as the
      // architecture's family runs them (a vision encoder's sequences are its images' tokens).
      const Workload workload = family_workload(*arch, wref.doc.select(c.scale).value_or(wref.doc.full));
      const std::string workload_part = job_id_part(workload);
      for (const auto& lref : c.layouts) {
        const auto misfits = layout_misfits(*arch, workload, lref.layout);
        if (!misfits.empty()) {
          if (c.unfit_layouts == UnfitPolicy::kSkip) {
            plan.skipped.push_back({arch->name, workload.name, lref.layout.name(), misfits});
          } else {
            diags.error(lref.pos, "layouts",
                        fmt::format("{} does not fit {} ({}) x {}: {} (set unfit_layouts: skip to skip such "
                                    "combinations)",
                                    lref.layout.name(), arch->name, c.scale, workload.name,
                                    fmt::join(misfits, "; ")));
          }
          continue;
        }
        const MemoryEstimate mem = memory_estimate(*arch, workload, lref.layout, c.backend, c.model_stage.reference);
        for (const auto& cs : c.candidate_sets) {
          for (int64_t rep = 0; rep < c.repetitions; ++rep) {
            Job job;
            job.arch = *arch;
            job.workload = workload;
            job.layout = lref.layout;
            job.candidates = cs;
            job.backend = c.backend;
            job.seed = c.seed;
            job.repetition = rep;
            job.kernel_stage = c.kernel_stage;
            job.model_stage = c.model_stage;
            job.time_limit_s = c.executor.time_limit_s;
            job.memory = mem;
            job.id = job_compute_id(arch_part, workload_part, job);
            plan.job_file.jobs.push_back(std::move(job));
          }
        }
      }
    }
  }
  if (diags.items().size() != before) return std::nullopt;
  return plan;
}

PlanTotals plan_totals(const Plan& plan) {
  PlanTotals t;
  for (const auto& j : plan.job_file.jobs) {
    ++t.jobs;
    t.rank_slots += j.layout.ranks();
    t.max_ranks = std::max(t.max_ranks, j.layout.ranks());
    t.max_memory_per_rank = std::max(t.max_memory_per_rank, j.memory.total());
  }
  t.skipped = static_cast<int64_t>(plan.skipped.size());
  return t;
}

namespace {

constexpr size_t kTableColumns = 7;
using TableRow = std::array<std::string, kTableColumns>;

TableRow table_header() { return {"JOB", "ARCHITECTURE", "LAYOUT", "WORKLOAD", "CANDIDATES", "RANKS", "MEM/RANK"}; }

TableRow table_row(const Job& j) {
  std::string cands = j.candidates.name;
  if (j.repetition > 0) cands += fmt::format(" #{}", j.repetition);
  return {j.id,
          fmt::format("{} ({})", j.arch.name, j.arch.preset),
          j.layout.name(),
          fmt::format("{} {}x{}", j.workload.name, j.workload.batch, j.workload.seq_len),
          cands,
          std::to_string(j.layout.ranks()),
          bytes_human(j.memory.total())};
}

}  // namespace

void plan_write_table(const Plan& plan, const std::function<void(std::string_view)>& out) {
  const auto& jobs = plan.job_file.jobs;
  std::array<size_t, kTableColumns> w{};
  auto measure = [&](const TableRow& r) {
    for (size_t i = 0; i < kTableColumns; ++i) w[i] = std::max(w[i], r[i].size());
  };
  measure(table_header());
  for (const auto& j : jobs) measure(table_row(j));
  auto print = [&](const TableRow& r) {
    out(fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}\n", r[0], w[0], r[1], w[1], r[2], w[2],
                    r[3], w[3], r[4], w[4], r[5], w[5], r[6], w[6]));
  };
  print(table_header());
  for (const auto& j : jobs) print(table_row(j));
  for (const auto& s : plan.skipped)
    out(fmt::format("skipped: {} x {} x {}: {}\n", s.architecture, s.workload, s.layout, fmt::join(s.reasons, "; ")));
  const PlanTotals t = plan_totals(plan);
  out(fmt::format("total: {} jobs, {} rank-slots, widest job {} ranks, largest estimate {} per rank, {} skipped\n",
                  t.jobs, t.rank_slots, t.max_ranks, bytes_human(t.max_memory_per_rank), t.skipped));
}

std::string plan_format_table(const Plan& plan) {
  std::string text;
  plan_write_table(plan, [&](std::string_view s) { text += s; });
  return text;
}

Json plan_to_json(const Plan& plan) {
  Json rows = Json::array();
  for (const auto& j : plan.job_file.jobs) {
    rows.push_back({{"id", j.id},
                    {"architecture", j.arch.name},
                    {"preset", j.arch.preset},
                    {"layout", j.layout.name()},
                    {"tp", j.layout.tp},
                    {"pp", j.layout.pp},
                    {"dp", j.layout.dp},
                    {"workload", j.workload.name},
                    {"candidate_set", j.candidates.name},
                    {"repetition", j.repetition},
                    {"ranks", j.layout.ranks()},
                    {"memory_per_rank_bytes", j.memory.total()},
                    {"weights_bytes", j.memory.weights_bytes},
                    {"kv_cache_bytes", j.memory.kv_cache_bytes},
                    {"activation_bytes", j.memory.activation_bytes}});
  }
  Json skipped = Json::array();
  for (const auto& s : plan.skipped)
    skipped.push_back({{"architecture", s.architecture},
                       {"workload", s.workload},
                       {"layout", s.layout},
                       {"reasons", s.reasons}});
  const PlanTotals t = plan_totals(plan);
  return Json{{"campaign", plan.job_file.campaign},
              {"scale", plan.job_file.scale},
              {"jobs", rows},
              {"skipped", skipped},
              {"totals",
               {{"jobs", t.jobs},
                {"rank_slots", t.rank_slots},
                {"max_ranks", t.max_ranks},
                {"max_memory_per_rank_bytes", t.max_memory_per_rank},
                {"skipped", t.skipped}}}};
}

}  // namespace fk::orchestrator
