#include "results/campaign/score.h"

#include "results/campaign/stats.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace fk::results {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// op -> folder of the job's candidate set, from job_json (empty when unreadable).
std::vector<std::string> candidate_ops(const h5::Group& root) {
  std::string text;
  if (root.has_attr("job_json")) {
    text = root.attr<std::string>("job_json");
  } else if (root.exists("job_json")) {
    const std::vector<int32_t> bytes = root.read_array<int32_t>("job_json");
    text.assign(bytes.begin(), bytes.end());
  }
  std::vector<std::string> ops;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("candidates") || !j["candidates"].contains("ops")) return ops;
  for (auto it = j["candidates"]["ops"].begin(); it != j["candidates"]["ops"].end(); ++it) ops.push_back(it.key());
  return ops;
}

}  // namespace

double ScoreItem::credit() const {
  return passed() && std::isfinite(e2e_speedup) && e2e_speedup > 0 ? e2e_speedup : 1.0;
}

std::vector<ScoreItem> score_items_read(const h5::Group& root, const JobDigest& digest) {
  std::vector<ScoreItem> items;
  if (root.exists("candidates/summary")) {
    const h5::Table t = root.read_table("candidates/summary");
    for (size_t i = 0; i < t.rows(); ++i) {
      ScoreItem it;
      it.job = digest.keys;
      it.candidate = t.column<std::string>("candidate")[i];
      it.op = t.column<std::string>("op")[i];
      it.verdict = t.column<std::string>("verdict")[i];
      it.reason = t.column<std::string>("reason")[i];
      it.exercised = t.column<bool>("exercised")[i];
      it.e2e_speedup = t.column<double>("e2e_speedup")[i];
      it.kernel_speedup = t.column<double>("kernel_speedup_geomean")[i];
      it.model_rel_err = t.column<double>("model_rel_err")[i];
      it.baseline_model_rel_err = t.column<double>("baseline_model_rel_err")[i];
      items.push_back(std::move(it));
    }
    return items;
  }
  if (digest.status == "completed") return items;  // baseline-only job
  for (const std::string& op : candidate_ops(root)) {
    ScoreItem it;
    it.job = digest.keys;
    it.candidate = op;
    it.op = op;
    it.verdict = "JOB_FAILED";
    it.reason = digest.error;
    it.exercised = true;
    it.e2e_speedup = it.kernel_speedup = it.model_rel_err = it.baseline_model_rel_err = kNaN;
    items.push_back(std::move(it));
  }
  return items;
}

Score score_compute(const std::vector<ScoreItem>& items) {
  Score s;
  std::vector<double> credits, passed_speedups;
  for (const ScoreItem& it : items) {
    ++s.items;
    if (!it.applicable()) continue;
    ++s.applicable;
    credits.push_back(it.credit());
    if (it.passed()) {
      ++s.passed;
      passed_speedups.push_back(it.e2e_speedup);
    }
  }
  s.geomean_credit = stats_geomean(credits);
  s.geomean_passed = stats_geomean(passed_speedups);
  s.correctness = s.applicable > 0 ? static_cast<double>(s.passed) / static_cast<double>(s.applicable) : kNaN;
  s.coverage = s.items > 0 ? static_cast<double>(s.applicable) / static_cast<double>(s.items) : kNaN;
  if (s.items == 0) {
    s.score = kNaN;
  } else if (s.applicable == 0) {
    s.score = 0;  // nothing the candidates cover: no credit at all
  } else {
    s.score = s.geomean_credit * s.correctness * s.coverage;
  }
  return s;
}

}  // namespace fk::results
