#include "results/campaign/report_data.h"

#include "core/error.h"
#include "core/spec/family.h"
#include "results/campaign/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace fk::results {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ArchOpAcc {
  ArchOpRow row;
  std::vector<double> step_s;           // per job
  std::vector<double> kernel_speedups;  // candidate instance rows
  std::vector<ScoreItem> items;
};

void read_kernels(const h5::Group& root, const JobDigest& d, std::map<std::pair<std::string, std::string>, ArchOpAcc>& acc) {
  if (!root.exists("kernel_stage/instances")) return;
  const h5::Table t = root.read_table("kernel_stage/instances");
  const auto& op = t.column<std::string>("op");
  const auto& passed = t.column<bool>("passed");
  const auto& rel = t.column<double>("rel_l2");
  const auto& median = t.column<double>("median_s");
  const auto& calls = t.column<int64_t>("calls_per_step");
  std::map<std::string, double> step_s;
  for (size_t i = 0; i < t.rows(); ++i) {
    ArchOpAcc& a = acc[{d.keys.architecture, op[i]}];
    a.row.instances += 1;
    a.row.passed += passed[i];
    if (std::isnan(a.row.max_rel_l2) || rel[i] > a.row.max_rel_l2) a.row.max_rel_l2 = rel[i];
    if (std::isfinite(median[i])) step_s[op[i]] += median[i] * static_cast<double>(calls[i]);
  }
  for (const auto& [name, s] : step_s) {
    ArchOpAcc& a = acc[{d.keys.architecture, name}];
    a.row.jobs += 1;
    a.step_s.push_back(s);
  }
}

void read_candidate_speedups(const h5::Group& root, const JobDigest& d,
                             std::map<std::pair<std::string, std::string>, ArchOpAcc>& acc) {
  if (!root.exists("candidates/instances")) return;
  const h5::Table t = root.read_table("candidates/instances");
  const auto& op = t.column<std::string>("op");
  const auto& speedup = t.column<double>("speedup");
  for (size_t i = 0; i < t.rows(); ++i)
    if (std::isfinite(speedup[i]) && speedup[i] > 0) acc[{d.keys.architecture, op[i]}].kernel_speedups.push_back(speedup[i]);
}

void read_traces(const h5::Group& root, const JobDigest& d, std::vector<LayerTrace>& traces) {
  if (!root.exists("model_stage/layers")) return;
  const h5::Table t = root.read_table("model_stage/layers");
  const auto& run = t.column<std::string>("run");
  const auto& step = t.column<std::string>("step");
  const auto& layer = t.column<int64_t>("layer");
  const auto& err = t.column<double>("rel_err_vs_fp32");
  for (const char* name : {"baseline", "selected"}) {
    LayerTrace tr;
    tr.job = d.keys;
    tr.run = name;
    std::vector<std::pair<int64_t, double>> points;
    for (size_t i = 0; i < t.rows(); ++i)
      if (run[i] == name && step[i] == "prefill") points.emplace_back(layer[i], err[i]);
    if (points.empty()) continue;
    std::sort(points.begin(), points.end());
    for (const auto& [l, e] : points) {
      tr.layers.push_back(l);
      tr.rel_err_vs_fp32.push_back(e);
    }
    traces.push_back(std::move(tr));
  }
}

}  // namespace

ReportData report_data_read(const CampaignSource& source) {
  ReportData data;
  data.source = source.describe();
  data.created_at = source.campaign_attr("created_at");
  data.problems = source.problems();
  std::map<std::pair<std::string, std::string>, ArchOpAcc> acc;
  std::set<std::string> campaigns, devices;
  for (const std::string& id : source.job_ids()) {
    try {
      const JobView view = source.job(id);
      JobDigest d = job_digest_read(view.root, id);
      std::vector<ScoreItem> items = score_items_read(view.root, d);
      read_kernels(view.root, d, acc);
      read_candidate_speedups(view.root, d, acc);
      read_traces(view.root, d, data.traces);
      for (const ScoreItem& it : items) acc[{d.keys.architecture, it.op}].items.push_back(it);
      data.items.insert(data.items.end(), items.begin(), items.end());
      campaigns.insert(d.keys.campaign);
      if (!d.device.empty()) devices.insert(d.device);
      data.jobs.push_back(std::move(d));
    } catch (const Error& e) {
      data.problems.push_back(fmt::format("job {}: {}", id, e.what()));
    }
  }
  for (const std::string& c : campaigns) data.campaign += (data.campaign.empty() ? "" : ",") + c;
  data.devices.assign(devices.begin(), devices.end());
  std::map<std::string, std::string> family_of;
  for (const JobDigest& d : data.jobs) family_of[d.keys.architecture] = d.keys.family;
  for (auto& [key, a] : acc) {
    ArchOpRow row = a.row;
    row.architecture = key.first;
    row.op = key.second;
    row.family = family_of[key.first];
    row.step_s = a.step_s.empty() ? kNaN : [&] {
      double sum = 0;
      for (double s : a.step_s) sum += s;
      return sum / static_cast<double>(a.step_s.size());
    }();
    if (row.instances == 0) row.max_rel_l2 = kNaN;
    row.kernel_speedup = stats_geomean(a.kernel_speedups);
    for (const ScoreItem& it : a.items) row.verdicts[it.applicable() ? it.verdict : "N/A"] += 1;
    row.e2e_speedup = a.items.empty() ? kNaN : score_compute(a.items).geomean_credit;
    data.arch_ops.push_back(std::move(row));
  }
  return data;
}

namespace {

// One row per group `key` gives a job, by name; `names` first, in their order, each
// present even without a job.
std::vector<GroupRow> report_groups(const ReportData& data, std::string (*key)(const JobKeys&),
                                    const std::vector<std::string>& names = {}) {
  std::map<std::string, GroupRow> rows;
  std::map<std::string, std::set<std::string>> archs;
  std::map<std::string, std::vector<double>> errs;
  std::map<std::string, std::vector<ScoreItem>> items;
  for (const JobDigest& d : data.jobs) {
    const std::string name = key(d.keys);
    GroupRow& r = rows[name];
    r.name = name;
    r.jobs += 1;
    r.kernel_instances += d.kernels_total;
    r.kernels_passed += d.kernels_passed;
    archs[name].insert(d.keys.architecture);
    errs[name].push_back(d.baseline.last_layer_err);
  }
  for (const ScoreItem& it : data.items) items[key(it.job)].push_back(it);
  std::vector<GroupRow> out;
  auto finish = [&](const std::string& name) {
    GroupRow r = rows[name];
    r.name = name;
    r.architectures = static_cast<int64_t>(archs[name].size());
    r.geomean_baseline_err = r.jobs > 0 ? stats_geomean(errs[name]) : kNaN;
    r.score = score_compute(items[name]);
    out.push_back(r);
  };
  for (const std::string& name : names) finish(name);
  for (const auto& [name, r] : rows)
    if (std::find(names.begin(), names.end(), name) == names.end()) finish(name);
  return out;
}

}  // namespace

std::vector<GroupRow> report_families(const ReportData& data) {
  return report_groups(data, [](const JobKeys& k) { return k.family; });
}

std::vector<GroupRow> report_categories(const ReportData& data) {
  std::vector<std::string> names;
  for (const spec::FastKernelsCategory c : spec::fastkernels_categories())
    names.emplace_back(spec::fastkernels_category_name(c));
  return report_groups(data, [](const JobKeys& k) { return k.category.empty() ? std::string("-") : k.category; },
                       names);
}

double report_layout_speedup(const ReportData& data, const JobDigest& job) {
  for (const JobDigest& d : data.jobs)
    if (d.keys.ranks == 1 && d.keys.architecture == job.keys.architecture && d.keys.workload == job.keys.workload &&
        d.keys.candidate_set == job.keys.candidate_set && d.keys.repetition == job.keys.repetition &&
        d.keys.preset == job.keys.preset)
      return d.baseline.model_s > 0 && job.baseline.model_s > 0 ? d.baseline.model_s / job.baseline.model_s : kNaN;
  return kNaN;
}

}  // namespace fk::results
