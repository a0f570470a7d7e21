#include "results/campaign/job_digest.h"

#include "core/error.h"
#include "core/spec/family.h"
#include "core/spec/json_io.h"
#include "core/stats.h"
#include "results/model_time.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fk::results {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string str_attr(const h5::Group& g, const char* name) {
  return g.has_attr(name) ? g.attr<std::string>(name) : std::string();
}
int64_t int_attr(const h5::Group& g, const char* name, int64_t fallback) {
  return g.has_attr(name) ? g.attr<int64_t>(name) : fallback;
}

bool has_table(const h5::Group& g, const char* path) {
  return g.exists(path) && g.kind(path) == h5::ObjectKind::kDataset;
}

// The run's model-stage times (results/model_time.h, the runner's definition) from
// the steps table read back as records.
void read_times(const h5::Table& steps, const std::string& run, RunFigures& out) {
  const auto& runs = steps.column<std::string>("run");
  const auto& iters = steps.column<int64_t>("iteration");
  const auto& names = steps.column<std::string>("step");
  const std::vector<int64_t> ranks =
      steps.has_column("rank") ? steps.column<int64_t>("rank") : std::vector<int64_t>(steps.rows(), 0);
  const auto& total = steps.column<double>("total_s");
  const auto& compute = steps.column<double>("compute_s");
  const auto& comm = steps.column<double>("comm_s");
  std::vector<StepTiming> records;
  for (size_t i = 0; i < steps.rows(); ++i)
    if (runs[i] == run) records.push_back({runs[i], iters[i], names[i], ranks[i], total[i], compute[i], comm[i]});
  const ModelTimeIterations t = model_time_iterations(records, run);
  out.present = !t.iteration.empty();
  out.iterations = static_cast<int64_t>(t.iteration.size());
  out.model_s = stats::median(t.model_s);
  out.mean_rank_s = stats::median(t.mean_rank_s);
  out.compute_s = stats::median(t.compute_s);
  out.comm_s = stats::median(t.comm_s);
}

void read_precision(const h5::Group& ms, const std::string& run, RunFigures& out) {
  out.last_layer_err = out.top1 = out.kl = kNaN;
  if (has_table(ms, "layers")) {
    const h5::Table t = ms.read_table("layers");
    const auto& runs = t.column<std::string>("run");
    const auto& steps = t.column<std::string>("step");
    const auto& layer = t.column<int64_t>("layer");
    const auto& err = t.column<double>("rel_err_vs_fp32");
    int64_t last = -1;
    for (size_t i = 0; i < t.rows(); ++i)
      if (runs[i] == run && steps[i] == "prefill" && layer[i] > last) {
        last = layer[i];
        out.last_layer_err = err[i];
      }
  }
  if (has_table(ms, "logits")) {
    const h5::Table t = ms.read_table("logits");
    const auto& runs = t.column<std::string>("run");
    const auto& seqs = t.column<int64_t>("sequences");
    const auto& top1 = t.column<double>("top1_vs_fp32");
    const auto& kl = t.column<double>("kl_vs_fp32");
    double n = 0, t1 = 0, k = 0;
    for (size_t i = 0; i < t.rows(); ++i)
      if (runs[i] == run) {
        const double w = static_cast<double>(seqs[i]);
        n += w;
        t1 += w * top1[i];
        k += w * kl[i];
      }
    if (n > 0) {
      out.top1 = t1 / n;
      out.kl = k / n;
    }
  }
}

RunFigures run_figures(const h5::Group& root, const std::string& run) {
  RunFigures f;
  f.model_s = f.compute_s = f.comm_s = f.mean_rank_s = kNaN;
  f.last_layer_err = f.top1 = f.kl = kNaN;
  if (!root.exists("model_stage")) return f;
  const h5::Group ms = root.open_group("model_stage");
  if (has_table(ms, "steps")) read_times(ms.read_table("steps"), run, f);
  if (f.present) read_precision(ms, run, f);
  return f;
}

}  // namespace

namespace {

// The job's architecture as the job file's job_json holds it (null when absent or
// unreadable).
nlohmann::json job_architecture(const h5::Group& root) {
  std::string text;
  if (root.has_attr("job_json")) {
    text = root.attr<std::string>("job_json");
  } else if (root.exists("job_json") && root.kind("job_json") == h5::ObjectKind::kDataset) {
    const std::vector<int32_t> bytes = root.read_array<int32_t>("job_json");
    text.assign(bytes.begin(), bytes.end());
  }
  if (text.empty()) return nullptr;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("architecture")) return nullptr;
  return j["architecture"];
}

std::string family_of(const nlohmann::json& a, const std::string& model_type) {
  std::string family;
  if (a.is_object() && a.contains("family") && a["family"].is_string()) family = a["family"].get<std::string>();
  return family.empty() ? model_type : family;
}

std::string category_of(const nlohmann::json& a) {
  if (!a.is_object()) return "";
  try {
    return spec::fastkernels_category_of(spec::architecture_from_json(a, "/architecture"));
  } catch (const Error&) {
    return "";  // a job file of another version: its architecture does not read back
  }
}

}  // namespace

std::string job_family(const h5::Group& root, const std::string& model_type) {
  return family_of(job_architecture(root), model_type);
}

std::string layout_short(const JobKeys& k) {
  std::string s;
  if (k.tp > 1) s += "tp" + std::to_string(k.tp);
  if (k.pp > 1) s += "pp" + std::to_string(k.pp);
  if (k.dp > 1) s += "dp" + std::to_string(k.dp);
  return s.empty() ? "tp1" : s;
}

std::string job_label(const JobKeys& k) {
  std::string s = k.architecture + "/" + k.workload + "/" + k.layout;
  if (!k.candidate_set.empty()) s += "/" + k.candidate_set;
  if (k.repetition > 0) s += "/rep" + std::to_string(k.repetition);
  return s;
}

JobDigest job_digest_read(const h5::Group& root, const std::string& fallback_id) {
  JobDigest d;
  JobKeys& k = d.keys;
  k.job_id = str_attr(root, "job_id");
  if (k.job_id.empty()) k.job_id = fallback_id;
  k.campaign = str_attr(root, "campaign");
  k.architecture = str_attr(root, "architecture");
  k.preset = str_attr(root, "preset");
  k.model_type = str_attr(root, "model_type");
  const nlohmann::json arch = job_architecture(root);  // job_json is parsed once
  k.family = family_of(arch, k.model_type);
  k.category = category_of(arch);
  k.workload = str_attr(root, "workload");
  k.phase = str_attr(root, "phase");
  k.dtype = str_attr(root, "dtype");
  k.layout = str_attr(root, "layout");
  k.tp = int_attr(root, "tp", 1);
  k.pp = int_attr(root, "pp", 1);
  k.dp = int_attr(root, "dp", 1);
  k.ranks = int_attr(root, "ranks", k.tp * k.pp * k.dp);
  k.candidate_set = str_attr(root, "candidate_set");
  k.backend = str_attr(root, "backend");
  k.seed = int_attr(root, "seed", 0);
  k.repetition = int_attr(root, "repetition", 0);
  d.status = str_attr(root, "status");
  d.error = str_attr(root, "error");
  d.started_at = str_attr(root, "started_at");
  d.device = str_attr(root, "device");
  d.fk_version = str_attr(root, "fk_version");
  d.wall_s = root.has_attr("wall_s") ? root.attr<double>("wall_s") : kNaN;

  d.kernel_max_rel_l2 = kNaN;
  if (has_table(root, "kernel_stage/instances")) {
    const h5::Table t = root.read_table("kernel_stage/instances");
    const auto& passed = t.column<bool>("passed");
    const auto& rel = t.column<double>("rel_l2");
    d.kernels_total = static_cast<int64_t>(t.rows());
    for (size_t i = 0; i < t.rows(); ++i) {
      d.kernels_passed += passed[i];
      if (std::isnan(d.kernel_max_rel_l2) || rel[i] > d.kernel_max_rel_l2) d.kernel_max_rel_l2 = rel[i];
    }
  }
  if (root.exists("model_stage")) {
    const h5::Group ms = root.open_group("model_stage");
    d.memory_estimate_bytes = int_attr(ms, "memory_estimate_bytes", 0);
    if (has_table(ms, "memory")) {
      const h5::Table t = ms.read_table("memory");
      const auto& in_use = t.column<int64_t>("peak_in_use_bytes");
      const auto& reserved = t.column<int64_t>("peak_reserved_bytes");
      for (size_t i = 0; i < t.rows(); ++i) {
        d.peak_memory_bytes = std::max(d.peak_memory_bytes, in_use[i]);
        d.peak_reserved_bytes = std::max(d.peak_reserved_bytes, reserved[i]);
      }
    }
  }
  d.baseline = run_figures(root, "baseline");
  d.selected = run_figures(root, "selected");
  d.e2e_speedup = model_time_speedup(d.baseline.model_s, d.selected.model_s);
  if (has_table(root, "candidates/summary")) {
    const h5::Table t = root.read_table("candidates/summary");
    const auto& verdict = t.column<std::string>("verdict");
    d.candidates = static_cast<int64_t>(t.rows());
    for (const auto& v : verdict) d.candidates_passed += v == "PASSED";
  }
  return d;
}

}  // namespace fk::results
