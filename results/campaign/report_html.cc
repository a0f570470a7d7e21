#include "results/campaign/report_html.h"

#include "results/campaign/report_tables.h"
#include "results/campaign/stats.h"
#include "results/campaign/svg.h"
#include "results/campaign/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace fk::results {
namespace {

std::string esc(const std::string& s) { return svg_escape(s); }

std::string html_table(const ReportTable& t) {
  std::string out = "<h2>" + esc(t.title) + "</h2>\n<table>\n<tr>";
  for (const auto& h : t.header) out += "<th>" + esc(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (const auto& cell : row) out += "<td>" + esc(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// Layouts in display order: by ranks, then tp, pp, dp.
std::vector<std::string> ordered_layouts(const ReportData& data) {
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, std::string>> order;
  for (const JobDigest& d : data.jobs) order.insert({d.keys.ranks, d.keys.tp, d.keys.pp, d.keys.dp, layout_short(d.keys)});
  std::vector<std::string> out;
  for (const auto& o : order) out.push_back(std::get<4>(o));
  return out;
}

std::string speedup_chart(const ReportData& data) {
  BarChart c;
  const bool cand = data.has_candidates();
  c.title = cand ? "End-to-end speedup of the candidates by layout" : "Speedup of each layout over one rank";
  c.y_label = cand ? "credited e2e speedup (geomean)" : "model-stage speedup vs tp1pp1dp1";
  std::set<std::string> archs;
  for (const JobDigest& d : data.jobs) archs.insert(d.keys.architecture);
  c.series.assign(archs.begin(), archs.end());
  std::map<std::pair<std::string, std::string>, std::vector<double>> values;  // (layout, arch) -> values
  if (cand) {
    std::map<std::pair<std::string, std::string>, std::vector<ScoreItem>> items;
    for (const ScoreItem& it : data.items) items[{layout_short(it.job), it.job.architecture}].push_back(it);
    for (const auto& [key, v] : items) values[key].push_back(score_compute(v).geomean_credit);
  } else {
    for (const JobDigest& d : data.jobs)
      values[{layout_short(d.keys), d.keys.architecture}].push_back(report_layout_speedup(data, d));
  }
  for (const std::string& layout : ordered_layouts(data)) {
    BarGroup g;
    g.label = layout;
    for (const std::string& a : c.series) {
      auto it = values.find({layout, a});
      g.values.push_back(it == values.end() ? NAN : stats_geomean(it->second));
    }
    c.groups.push_back(std::move(g));
  }
  return svg_bar_chart(c);
}

std::vector<std::string> error_charts(const ReportData& data) {
  std::map<std::pair<std::string, std::string>, std::vector<const LayerTrace*>> by;
  for (const LayerTrace& t : data.traces) by[{t.job.architecture, t.job.workload}].push_back(&t);
  std::vector<std::string> out;
  for (const auto& [key, traces] : by) {
    if (out.size() == kHtmlMaxErrorCharts) break;
    LineChart c;
    c.title = fmt::format("Relative error vs layer: {} / {} (prefill)", key.first, key.second);
    c.x_label = "layer";
    c.y_label = "rel. L2 error vs fp32 run";
    std::vector<const LayerTrace*> sorted = traces;
    std::stable_sort(sorted.begin(), sorted.end(), [](const LayerTrace* a, const LayerTrace* b) {
      return std::tie(a->job.ranks, a->job.tp, a->job.pp, a->job.candidate_set, a->run) <
             std::tie(b->job.ranks, b->job.tp, b->job.pp, b->job.candidate_set, b->run);
    });
    for (const LayerTrace* t : sorted) {
      if (c.series.size() == kHtmlMaxLinesPerChart) break;
      LineSeries s;
      s.name = layout_short(t->job) + (data.has_candidates() ? " " + t->job.candidate_set : "") + " " + t->run;
      for (size_t i = 0; i < t->layers.size(); ++i) {
        s.x.push_back(static_cast<double>(t->layers[i]));
        s.y.push_back(t->rel_err_vs_fp32[i]);
      }
      s.dashed = t->run == "selected";
      c.series.push_back(std::move(s));
    }
    out.push_back(svg_line_chart(c));
  }
  return out;
}

std::string time_chart(const ReportData& data) {
  StackChart c;
  c.title = "Time split of the baseline run: compute and communication";
  c.x_label = "ms per model-stage run (prefill + decode steps; mean over ranks)";
  c.parts = {"compute", "communication", "other"};
  const std::vector<const JobDigest*> jobs = report_sorted_jobs(data);
  const bool aggregate = jobs.size() > kHtmlMaxTimeRows;
  std::vector<std::string> order;
  std::map<std::string, std::vector<const JobDigest*>> rows;
  for (const JobDigest* d : jobs) {
    std::string label = d->keys.architecture + " " + d->keys.workload + " " + layout_short(d->keys);
    if (!aggregate && data.has_candidates()) label += " " + d->keys.candidate_set;
    if (!aggregate && d->keys.repetition > 0) label += " rep" + std::to_string(d->keys.repetition);
    if (!rows.count(label)) order.push_back(label);
    rows[label].push_back(d);
  }
  for (const std::string& label : order) {
    if (c.rows.size() == kHtmlMaxTimeRows) break;
    double compute = 0, comm = 0, total = 0;
    int n = 0;
    for (const JobDigest* d : rows[label])
      if (std::isfinite(d->baseline.mean_rank_s)) {
        compute += d->baseline.compute_s;
        comm += d->baseline.comm_s;
        total += d->baseline.mean_rank_s;
        ++n;
      }
    if (n == 0) continue;
    compute /= n;
    comm /= n;
    total /= n;
    c.rows.push_back({label, {1e3 * compute, 1e3 * comm, 1e3 * std::max(0.0, total - compute - comm)}});
  }
  return svg_stacked_bars(c);
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222}"
    "table{border-collapse:collapse;margin:8px 0 24px 0;font-size:12px}"
    "th,td{border:1px solid #ccc;padding:3px 6px;text-align:left}"
    "th{background:#f0f0f0}"
    "figure{margin:12px 0}"
    ".score{font-size:16px;font-weight:bold}";

}  // namespace

std::string report_html(const ReportData& data) {
  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE html>\n";
  out += "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += "<title>" + esc("FastKernels report: " + data.campaign) + "</title>\n";
  out += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);
  out += "<h1>" + esc("FastKernels campaign report: " + (data.campaign.empty() ? "(unnamed)" : data.campaign)) + "</h1>\n";
  int64_t completed = 0;
  for (const JobDigest& d : data.jobs) completed += d.status == "completed";
  out += "<p>" + esc(fmt::format("{} - {} jobs ({} completed, {} failed){}", data.source, data.jobs.size(), completed,
                                 static_cast<int64_t>(data.jobs.size()) - completed,
                                 data.created_at.empty() ? "" : ", created " + data.created_at)) +
         "</p>\n";
  const Score score = score_compute(data.items);
  out += "<p class=\"score\">" + esc(report_score_line(score)) + "</p>\n";
  out += "<p>" +
         esc("G: geometric mean over applicable (job, candidate) items of the end-to-end speedup, 1.0 for an "
             "item that is not PASSED; C: fraction of applicable items PASSED; V: coverage, applicable items over "
             "all items (an item is not applicable when the model has no call of its op; docs/reports.md).") +
         "</p>\n";
  out += "<h2>Charts</h2>\n";
  out += "<figure>" + speedup_chart(data) + "</figure>\n";
  for (const std::string& svg : error_charts(data)) out += "<figure>" + svg + "</figure>\n";
  out += "<figure>" + time_chart(data) + "</figure>\n";
  for (const ReportTable& t : report_tables(data)) out += html_table(t);
  if (!data.problems.empty()) {
    out += "<h2>Left out</h2>\n<ul>\n";
    for (const auto& p : data.problems) out += "<li>" + esc(p) + "</li>\n";
    out += "</ul>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace fk::results
