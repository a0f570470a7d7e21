#include "results/campaign/summary_tables.h"

namespace fk::results {
namespace {

using Key = TableStack::Key;

bool has_table(const h5::Group& g, const char* path) {
  return g.exists(path) && g.kind(path) == h5::ObjectKind::kDataset;
}

}  // namespace

std::vector<Key> summary_job_keys(const JobKeys& k) {
  return {{"job_id", k.job_id},     {"architecture", k.architecture}, {"family", k.family},
          {"category", k.category}, {"workload", k.workload},         {"phase", k.phase},
          {"layout", k.layout},
          {"tp", k.tp},             {"pp", k.pp},                     {"dp", k.dp},
          {"candidate_set", k.candidate_set}, {"repetition", k.repetition}};
}

namespace {

std::vector<Key> job_row(const JobDigest& d, const std::string& source_file) {
  const JobKeys& k = d.keys;
  return {{"job_id", k.job_id},
                    {"campaign", k.campaign},
                    {"architecture", k.architecture},
                    {"preset", k.preset},
                    {"model_type", k.model_type},
                    {"family", k.family},
                    {"category", k.category},
                    {"workload", k.workload},
                    {"phase", k.phase},
                    {"dtype", k.dtype},
                    {"layout", k.layout},
                    {"tp", k.tp},
                    {"pp", k.pp},
                    {"dp", k.dp},
                    {"ranks", k.ranks},
                    {"candidate_set", k.candidate_set},
                    {"backend", k.backend},
                    {"seed", k.seed},
                    {"repetition", k.repetition},
                    {"status", d.status},
                    {"error", d.error},
                    {"started_at", d.started_at},
                    {"wall_s", d.wall_s},
                    {"kernels_total", d.kernels_total},
                    {"kernels_passed", d.kernels_passed},
                    {"kernel_max_rel_l2", d.kernel_max_rel_l2},
                    {"baseline_rel_err_vs_fp32", d.baseline.last_layer_err},
                    {"baseline_top1_vs_fp32", d.baseline.top1},
                    {"baseline_kl_vs_fp32", d.baseline.kl},
                    {"baseline_model_s", d.baseline.model_s},
                    {"baseline_compute_s", d.baseline.compute_s},
                    {"baseline_comm_s", d.baseline.comm_s},
                    {"baseline_mean_rank_s", d.baseline.mean_rank_s},
                    {"model_iterations", d.baseline.iterations},
                    {"selected_model_s", d.selected.model_s},
                    {"selected_compute_s", d.selected.compute_s},
                    {"selected_comm_s", d.selected.comm_s},
                    {"selected_rel_err_vs_fp32", d.selected.last_layer_err},
                    {"selected_top1_vs_fp32", d.selected.top1},
                    {"e2e_speedup", d.e2e_speedup},
                    {"candidates", d.candidates},
                    {"candidates_passed", d.candidates_passed},
                    {"peak_memory_bytes", d.peak_memory_bytes},
                    {"peak_reserved_bytes", d.peak_reserved_bytes},
                    {"memory_estimate_bytes", d.memory_estimate_bytes},
                    {"device", d.device},
                    {"source_file", source_file}};
}

}  // namespace

void SummaryTables::add_job(const JobDigest& d, const h5::Group& root, const std::string& source_file) {
  const JobKeys& k = d.keys;
  jobs_.append_row(job_row(d, source_file));
  const std::vector<Key> keys = summary_job_keys(k);
  if (has_table(root, "kernel_stage/instances")) kernels_.append(keys, root.read_table("kernel_stage/instances"));
  if (has_table(root, "candidates/summary")) candidates_.append(keys, root.read_table("candidates/summary"));
}

void SummaryTables::write(h5::Group& summary) {
  auto put = [&](const char* name, TableStack& stack, const char* what) {
    h5::Dataset ds = summary.write_table(name, stack.take());
    ds.set_attr("rows", what);
  };
  // Tables without rows still get their key columns (a table needs a column).
  jobs_.append(job_row(JobDigest{}, ""), h5::Table());
  kernels_.append(summary_job_keys(JobKeys{}), h5::Table());
  candidates_.append(summary_job_keys(JobKeys{}), h5::Table());
  put("jobs", jobs_, "one row per job");
  put("kernels", kernels_, "one row per job x kernel-stage op instance (kernel_stage/instances)");
  put("candidates", candidates_, "one row per job x candidate (candidates/summary)");
}

}  // namespace fk::results
