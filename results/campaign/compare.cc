#include "results/campaign/compare.h"

#include "core/error.h"
#include "results/campaign/job_digest.h"
#include "results/campaign/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace fk::results {
namespace {

// A timing item waiting for its pack's noise estimate.
struct PendingTiming {
  std::string pack;  // "kernel", "candidate", "model"
  std::string job_id, job, item, metric;
  SpeedTest test;
};

struct JobContext {
  const CompareOptions& o;
  CompareResult& result;
  std::vector<PendingTiming>& timings;
  std::string job_id, job;
};

std::optional<h5::Table> table_at(const h5::Group& root, const std::string& path) {
  if (!root.exists(path) || root.kind(path) != h5::ObjectKind::kDataset) return std::nullopt;
  return root.read_table(path);
}

std::vector<double> samples_at(const h5::Group& root, const std::string& path, int64_t row = -1) {
  if (!root.exists(path) || root.kind(path) != h5::ObjectKind::kDataset) return {};
  const h5::Dataset ds = root.open_dataset(path);
  std::vector<double> all = ds.read<double>();
  if (row < 0) return all;
  const Shape shape = ds.shape();
  if (shape.size() != 2 || row >= shape[0]) return {};
  const auto width = static_cast<size_t>(shape[1]);
  return std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(row) * width),
                             all.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(row + 1) * width));
}

void add(JobContext& c, Change change, FindingKind kind, std::string item, std::string metric, std::string old_value,
         std::string new_value, std::string change_text, std::string evidence) {
  if (change != Change::kWorse && change != Change::kBetter) return;
  Finding f;
  f.regression = change == Change::kWorse;
  f.kind = kind;
  f.job_id = c.job_id;
  f.job = c.job;
  f.item = std::move(item);
  f.metric = std::move(metric);
  f.old_value = std::move(old_value);
  f.new_value = std::move(new_value);
  f.change = std::move(change_text);
  f.evidence = std::move(evidence);
  c.result.findings.push_back(std::move(f));
}

std::string ratio_text(double old_v, double new_v) {
  if (!std::isfinite(old_v) || !std::isfinite(new_v) || old_v == 0) return "-";
  return fmt::format("x{:.2f}", new_v / old_v);
}

void judge_speed(JobContext& c, const std::string& pack, const std::string& item, const std::string& metric,
                 const std::vector<double>& a, const std::vector<double>& b) {
  const SpeedTest t = compare_speed(a, b, c.o);
  CompareCounts& n = c.result.counts;
  if (t.change == Change::kUntestable) {
    (t.why == "too fast" ? n.timings_too_fast : n.timings_too_few) += 1;
    return;
  }
  ++n.timings;
  c.timings.push_back({pack, c.job_id, c.job, item, metric, t});
}

// Decides the pending timings pack by pack (compare_rules.h, rules 5 and the pack rule).
void judge_timings(const std::vector<PendingTiming>& timings, const CompareOptions& o, CompareResult& r) {
  std::map<std::string, std::vector<const PendingTiming*>> packs;
  for (const PendingTiming& t : timings) packs[t.pack].push_back(&t);
  std::vector<PendingTiming> none;
  for (const auto& [pack, items] : packs) {
    std::vector<double> shifts;
    std::vector<std::string> jobs;
    for (const PendingTiming* t : items) {
      shifts.push_back(t->test.shift);
      jobs.push_back(t->job_id);
    }
    const PackNoise noise = compare_pack_noise(shifts, o, jobs);
    r.counts.packs.push_back(fmt::format("{} timings: {} items ({} slower, {} faster), median shift {:+.1f}%, noise "
                                         "sigma {:.1f}%{}; {} jobs ({} slower, {} faster by over {:.0f}%)",
                                         pack, noise.items, noise.slower, noise.faster, 100 * std::expm1(noise.shift),
                                         100 * noise.sigma,
                                         noise.resolves_items ? "" : " (too noisy to judge single timings)", noise.jobs,
                                         noise.jobs_slower, noise.jobs_faster, 50 * o.threshold));
    for (const PendingTiming* t : items) {
      JobContext c{o, r, none, t->job_id, t->job};
      const SpeedTest& s = t->test;
      const size_t before = r.findings.size();
      add(c, compare_speed_in_pack(s, noise, o), FindingKind::kSpeed, t->item, t->metric, fmt_seconds(s.old_median),
          fmt_seconds(s.new_median), fmt::format("{:+.0f}%", 100 * (s.ratio - 1)),
          fmt::format("p10 x{:.2f}; Mann-Whitney p={:.1e}; n={}/{}; pack noise {:.0f}%", s.low_ratio,
                      s.change == Change::kWorse ? s.p_slower : s.p_faster, s.n_old, s.n_new, 100 * noise.sigma));
      if (r.findings.size() > before) r.findings.back().resolved = noise.resolves_items;
    }
    if (noise.change != Change::kSame) {
      JobContext c{o, r, none, "", "(campaign)"};
      add(c, noise.change, FindingKind::kSpeed, fmt::format("all {} timings", pack), "p10 shift, median over items", "-",
          "-", fmt::format("{:+.0f}%", 100 * std::expm1(noise.shift)),
          fmt::format("{} items: {} slower, {} faster; signed-rank p={:.1e}; {} of {} jobs {}", noise.items,
                      noise.slower, noise.faster, noise.change == Change::kWorse ? noise.p_slower : noise.p_faster,
                      noise.change == Change::kWorse ? noise.jobs_slower : noise.jobs_faster, noise.jobs,
                      noise.change == Change::kWorse ? "slower" : "faster"));
    }
  }
}

void judge_error(JobContext& c, const std::string& item, const std::string& metric, double a, double b) {
  ++c.result.counts.precision;
  add(c, compare_error(a, b, c.o), FindingKind::kPrecision, item, metric, fmt_sci(a), fmt_sci(b), ratio_text(a, b),
      fmt::format("factor {:g}, floor {:g}", c.o.precision_factor, c.o.precision_floor));
}

void judge_agreement(JobContext& c, const std::string& item, const std::string& metric, double a, double b) {
  ++c.result.counts.precision;
  add(c, compare_agreement(a, b, c.o), FindingKind::kPrecision, item, metric, fmt_percent(a), fmt_percent(b),
      std::isfinite(a) && std::isfinite(b) ? fmt::format("{:+.0f} pts", 100 * (b - a)) : "-",
      fmt::format("drop limit {:.0f} pts", 100 * c.o.top1_drop));
}

void judge_verdict(JobContext& c, const std::string& item, const std::string& a, const std::string& b,
                   const std::string& reason) {
  ++c.result.counts.precision;
  add(c, compare_verdict(a, b), FindingKind::kVerdict, item, "verdict", a, b, a + " -> " + b, reason);
}

// --- kernel stage ---------------------------------------------------------------

using InstanceKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;

std::map<InstanceKey, size_t> instance_index(const h5::Table& t) {
  std::map<InstanceKey, size_t> index;
  for (size_t i = 0; i < t.rows(); ++i)
    index[{t.column<std::string>("op")[i], t.column<std::string>("role")[i], t.column<std::string>("shape")[i],
           t.column<std::string>("params")[i], t.column<std::string>("dtype")[i]}] = i;
  return index;
}

void compare_kernels(JobContext& c, const h5::Group& a, const h5::Group& b) {
  const auto ta = table_at(a, "kernel_stage/instances"), tb = table_at(b, "kernel_stage/instances");
  if (!ta || !tb) return;
  const auto ia = instance_index(*ta), ib = instance_index(*tb);
  for (const auto& [key, ra] : ia) {
    auto it = ib.find(key);
    if (it == ib.end()) {
      ++c.result.counts.unmatched_items;
      continue;
    }
    const size_t rb = it->second;
    const auto& [op, role, shape, params, dtype] = key;
    const std::string item = fmt::format("kernel {} {} {} {}{}", op, role, dtype, shape, params.empty() ? "" : " " + params);
    const auto index_a = ta->column<int64_t>("index")[ra], index_b = tb->column<int64_t>("index")[rb];
    judge_speed(c, "kernel", item, "time per call", samples_at(a, fmt::format("kernel_stage/timings/{:04d}", index_a)),
                samples_at(b, fmt::format("kernel_stage/timings/{:04d}", index_b)));
    judge_error(c, item, "rel L2 vs fp64", ta->column<double>("rel_l2")[ra], tb->column<double>("rel_l2")[rb]);
    const bool pa = ta->column<bool>("passed")[ra], pb = tb->column<bool>("passed")[rb];
    judge_verdict(c, item, pa ? "PASSED" : "OUT_OF_TOLERANCE", pb ? "PASSED" : "OUT_OF_TOLERANCE",
                  fmt::format("matched {:.3f} -> {:.3f}", ta->column<double>("matched_fraction")[ra],
                              tb->column<double>("matched_fraction")[rb]));
  }
  for (const auto& [key, rb] : ib)
    if (!ia.count(key)) ++c.result.counts.unmatched_items;
}

// --- model stage ----------------------------------------------------------------

std::map<std::pair<std::string, std::string>, std::vector<double>> step_samples(const h5::Table& t) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> out;  // (run, prefill|decode) -> samples
  const auto& run = t.column<std::string>("run");
  const auto& step = t.column<std::string>("step");
  const auto& total = t.column<double>("total_s");
  for (size_t i = 0; i < t.rows(); ++i)
    out[{run[i], step[i] == "prefill" ? "prefill" : "decode"}].push_back(total[i]);
  return out;
}

void compare_model(JobContext& c, const h5::Group& a, const h5::Group& b) {
  const std::vector<std::string> runs = {"baseline", "selected"};
  if (auto sa = table_at(a, "model_stage/steps"), sb = table_at(b, "model_stage/steps"); sa && sb) {
    const auto xa = step_samples(*sa), xb = step_samples(*sb);
    for (const auto& [key, samples] : xa) {
      if (std::find(runs.begin(), runs.end(), key.first) == runs.end()) continue;
      auto it = xb.find(key);
      if (it == xb.end()) continue;
      judge_speed(c, "model", fmt::format("model {} {}", key.first, key.second), "step time", samples, it->second);
    }
  }
  if (auto la = table_at(a, "model_stage/layers"), lb = table_at(b, "model_stage/layers"); la && lb) {
    using Key = std::tuple<std::string, std::string, int64_t>;
    auto index = [](const h5::Table& t) {
      std::map<Key, double> m;
      for (size_t i = 0; i < t.rows(); ++i)
        m[{t.column<std::string>("run")[i], t.column<std::string>("step")[i], t.column<int64_t>("layer")[i]}] =
            t.column<double>("rel_err_vs_fp32")[i];
      return m;
    };
    const auto ma = index(*la), mb = index(*lb);
    // One figure per (run, step): the layer whose error grew the most (or, when none
    // grew beyond the rule, shrank the most; else the last layer).
    struct Pick {
      int rank = -1;  // 2 worse, 1 better, 0 same
      double ratio = 0;
      int64_t layer = -1;
      double ea = 0, eb = 0;
    };
    std::map<std::pair<std::string, std::string>, Pick> worst;
    for (const auto& [key, ea] : ma) {
      const auto& [run, step, layer] = key;
      if (std::find(runs.begin(), runs.end(), run) == runs.end()) continue;
      auto it = mb.find(key);
      if (it == mb.end()) continue;
      const double eb = it->second;
      const Change ch = compare_error(ea, eb, c.o);
      const int rank = ch == Change::kWorse ? 2 : ch == Change::kBetter ? 1 : 0;
      const double ratio = std::isnan(eb) ? INFINITY : eb / std::max(ea, 1e-300);
      Pick& p = worst[{run, step}];
      const bool take = rank > p.rank || (rank == p.rank && (rank == 2   ? ratio > p.ratio
                                                             : rank == 1 ? ratio < p.ratio
                                                                         : layer > p.layer));
      if (take) p = Pick{rank, ratio, layer, ea, eb};
    }
    for (const auto& [key, p] : worst)
      judge_error(c, fmt::format("model {} {} layer {}", key.first, key.second, p.layer), "layer error vs fp32", p.ea,
                  p.eb);
  }
  if (auto ga = table_at(a, "model_stage/logits"), gb = table_at(b, "model_stage/logits"); ga && gb) {
    for (size_t i = 0; i < ga->rows(); ++i) {
      const std::string run = ga->column<std::string>("run")[i], step = ga->column<std::string>("step")[i];
      if (std::find(runs.begin(), runs.end(), run) == runs.end()) continue;
      for (size_t j = 0; j < gb->rows(); ++j) {
        if (gb->column<std::string>("run")[j] != run || gb->column<std::string>("step")[j] != step) continue;
        const std::string item = fmt::format("model {} {} logits", run, step);
        judge_error(c, item, "KL vs fp32", ga->column<double>("kl_vs_fp32")[i], gb->column<double>("kl_vs_fp32")[j]);
        judge_agreement(c, item, "top-1 vs fp32", ga->column<double>("top1_vs_fp32")[i],
                        gb->column<double>("top1_vs_fp32")[j]);
      }
    }
  }
}

// --- candidates -----------------------------------------------------------------

void compare_candidates(JobContext& c, const h5::Group& a, const h5::Group& b) {
  if (auto sa = table_at(a, "candidates/summary"), sb = table_at(b, "candidates/summary"); sa && sb) {
    std::map<std::string, size_t> ib;
    for (size_t j = 0; j < sb->rows(); ++j) ib[sb->column<std::string>("op")[j]] = j;
    for (size_t i = 0; i < sa->rows(); ++i) {
      const std::string op = sa->column<std::string>("op")[i];
      auto it = ib.find(op);
      if (it == ib.end()) {
        ++c.result.counts.unmatched_items;
        continue;
      }
      const size_t j = it->second;
      const std::string item = fmt::format("candidate {} ({})", sb->column<std::string>("candidate")[j], op);
      judge_verdict(c, item, sa->column<std::string>("verdict")[i], sb->column<std::string>("verdict")[j],
                    sb->column<std::string>("reason")[j]);
      judge_error(c, item, "model last-layer error vs fp32", sa->column<double>("model_rel_err")[i],
                  sb->column<double>("model_rel_err")[j]);
    }
  }
  if (auto ta = table_at(a, "candidates/instances"), tb = table_at(b, "candidates/instances"); ta && tb) {
    using Key = std::tuple<std::string, std::string, std::string, std::string, std::string, int64_t>;
    auto key_of = [](const h5::Table& t, size_t i) {
      return Key{t.column<std::string>("op")[i],     t.column<std::string>("role")[i],
                 t.column<std::string>("shape")[i],  t.column<std::string>("params")[i],
                 t.column<std::string>("dtype")[i],  t.column<int64_t>("rank")[i]};
    };
    std::map<Key, size_t> ib;
    for (size_t j = 0; j < tb->rows(); ++j) ib[key_of(*tb, j)] = j;
    for (size_t i = 0; i < ta->rows(); ++i) {
      auto it = ib.find(key_of(*ta, i));
      if (it == ib.end()) {
        ++c.result.counts.unmatched_items;
        continue;
      }
      const size_t j = it->second;
      const std::string item =
          fmt::format("candidate {} {} {} {} rank {}", tb->column<std::string>("candidate")[j],
                      tb->column<std::string>("role")[j], tb->column<std::string>("dtype")[j],
                      tb->column<std::string>("shape")[j], tb->column<int64_t>("rank")[j]);
      judge_verdict(c, item, ta->column<std::string>("verdict")[i], tb->column<std::string>("verdict")[j],
                    tb->column<std::string>("reason")[j]);
      judge_error(c, item, "rel L2 vs fp64", ta->column<double>("rel_l2")[i], tb->column<double>("rel_l2")[j]);
      judge_speed(c, "candidate", item, "candidate time per call", samples_at(a, fmt::format("candidates/timings/{:04d}", i), 0),
                  samples_at(b, fmt::format("candidates/timings/{:04d}", j), 0));
    }
  }
}

}  // namespace

std::string_view finding_kind_name(FindingKind kind) {
  switch (kind) {
    case FindingKind::kJob:
      return "job";
    case FindingKind::kSpeed:
      return "speed";
    case FindingKind::kPrecision:
      return "precision";
    case FindingKind::kVerdict:
      return "verdict";
  }
  return "?";
}

int64_t CompareResult::regressions() const {
  return std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.resolved && f.regression; });
}

int64_t CompareResult::improvements() const {
  return std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.resolved && !f.regression; });
}

int64_t CompareResult::unresolved() const {
  return std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return !f.resolved; });
}

CompareResult compare_campaigns(const CampaignSource& old_source, const CampaignSource& new_source,
                                const CompareOptions& o) {
  CompareResult r;
  std::vector<std::string> common;
  for (const std::string& id : old_source.job_ids())
    if (new_source.has_job(id)) common.push_back(id);
  if (common.empty())
    fail(ErrorKind::kInvalidArgument,
         "{} and {} have no job in common: compare two runs of the same campaign (job ids derive from the campaign)",
         old_source.describe(), new_source.describe());
  r.counts.jobs_common = static_cast<int64_t>(common.size());
  std::vector<PendingTiming> timings;
  for (const std::string& id : new_source.job_ids())
    if (!old_source.has_job(id)) ++r.counts.jobs_only_new;
  for (const std::string& id : old_source.job_ids()) {
    if (new_source.has_job(id)) continue;
    ++r.counts.jobs_only_old;
    std::string label = id;
    try {
      label = job_label(job_digest_read(old_source.job(id).root, id).keys);
    } catch (const Error&) {
    }
    JobContext c{o, r, timings, id, label};
    add(c, Change::kWorse, FindingKind::kJob, "job", "status", "present", "missing", "missing in NEW", "");
  }
  for (const std::string& id : common) {
    JobContext c{o, r, timings, id, id};
    try {
      const JobView va = old_source.job(id);
      const JobView vb = new_source.job(id);
      const JobDigest da = job_digest_read(va.root, id), db = job_digest_read(vb.root, id);
      c.job = job_label(db.keys);
      if (da.status != db.status) {
        const Change ch = da.status == "completed" ? Change::kWorse : db.status == "completed" ? Change::kBetter : Change::kSame;
        add(c, ch, FindingKind::kJob, "job", "status", da.status, db.status, da.status + " -> " + db.status, db.error);
      }
      if (db.status != "completed" || da.status != "completed") continue;
      compare_kernels(c, va.root, vb.root);
      compare_model(c, va.root, vb.root);
      compare_candidates(c, va.root, vb.root);
    } catch (const Error& e) {
      add(c, Change::kWorse, FindingKind::kJob, "job", "readable", "yes", "no", "cannot be compared", e.what());
    }
  }
  judge_timings(timings, o, r);
  std::stable_sort(r.findings.begin(), r.findings.end(), [](const Finding& x, const Finding& y) {
    return std::tie(x.kind, x.job, x.item) < std::tie(y.kind, y.job, y.item);
  });
  return r;
}

std::string compare_format(const CompareResult& r, const CompareOptions& o, bool verbose) {
  std::string out;
  out += fmt::format(
      "rules: slower/faster when median and p10 move > {:.0f}%, Mann-Whitney p < {:g} and the p10 shift stands "
      "{:g} noise sigmas out of its pack (medians >= {}); errors worse when x{:g} and +{:g}; top-1 when -{:.0f} pts; "
      "verdicts PASSED -> other\n",
      100 * o.threshold, o.alpha, o.noise_z, fmt_seconds(o.min_time_s), o.precision_factor, o.precision_floor,
      100 * o.top1_drop);
  auto table = [&](bool regression, bool resolved = true) {
    TextTable t({"KIND", "JOB", "ITEM", "METRIC", "OLD", "NEW", "CHANGE", "EVIDENCE"});
    for (const Finding& f : r.findings)
      if (f.resolved == resolved && (!resolved || f.regression == regression))
        t.add({std::string(finding_kind_name(f.kind)), f.job, f.item, f.metric, f.old_value, f.new_value, f.change,
               f.evidence.size() > 80 ? f.evidence.substr(0, 77) + "..." : f.evidence});
    return t;
  };
  const TextTable regressions = table(true);
  if (regressions.rows() > 0) out += fmt::format("\nREGRESSIONS ({})\n{}", regressions.rows(), regressions.str());
  if (verbose) {
    const TextTable improvements = table(false);
    if (improvements.rows() > 0) out += fmt::format("\nIMPROVEMENTS ({})\n{}", improvements.rows(), improvements.str());
    const TextTable unresolved = table(false, false);
    if (unresolved.rows() > 0)
      out += fmt::format("\nUNRESOLVED ({}: single timings in packs too noisy to judge them; not counted)\n{}",
                         unresolved.rows(), unresolved.str());
  }
  const CompareCounts& n = r.counts;
  out += fmt::format(
      "\ncompared {} jobs ({} only in OLD, {} only in NEW); {} timings ({} too fast, {} with too few samples to test), "
      "{} precision and verdict figures; {} unmatched items\n",
      n.jobs_common, n.jobs_only_old, n.jobs_only_new, n.timings, n.timings_too_fast, n.timings_too_few, n.precision,
      n.unmatched_items);
  for (const std::string& p : n.packs) out += "  " + p + "\n";
  out += fmt::format("fk compare: {} regression(s), {} improvement(s){}\n", r.regressions(), r.improvements(),
                     r.unresolved() > 0 ? fmt::format(", {} unresolved timing change(s) (--verbose)", r.unresolved())
                                        : "");
  return out;
}

}  // namespace fk::results
