#include "runner/candidate_stage.h"

#include "core/error.h"
#include "kernels/candidate/sanitizer.h"
#include "results/model_time.h"
#include "runner/heartbeat.h"
#include "runner/kernel_stage.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace fk::runner {

using kernels::Verdict;

bool candidate_may_join_model(Verdict v, const std::string& reason) {
  (void)reason;
  return v == Verdict::kPassed || v == Verdict::kIncorrectNumerical || v == Verdict::kUnsupported;
}

CandidateStage::CandidateStage(const spec::Job& job, collectives::Communicator& group, const Placement& placement,
                               int threads, kernels::Backend& backend, std::string quarantine_reason)
    : job_(job),
      group_(group),
      backend_(backend),
      pl_(placement),
      threads_(threads),
      quarantine_(std::move(quarantine_reason)) {
  for (const auto& [op, folder] : job.candidates.ops) {
    Entry e;
    e.op = op;
    e.folder = folder;
    entries_.push_back(std::move(e));
  }
}

void CandidateStage::build_one(Entry& e) {
  spec::Diagnostics diags;
  e.manifest = kernels::candidate_manifest_load(e.folder, diags);
  if (!quarantine_.empty()) {  // an earlier attempt crashed or hung with this set: drop it
    e.setup = {Verdict::kCrashed, fmt::format("quarantined: {}", quarantine_)};
    return;
  }
  if (!e.manifest) {
    e.setup = {Verdict::kCompileError, fmt::format("invalid kernel.yaml: {}", diags.to_string())};
    return;
  }
  if (e.manifest->op != e.op) {
    e.setup = {Verdict::kCompileError, fmt::format("kernel.yaml declares op '{}' but the candidate set uses it for '{}'",
                                                   e.manifest->op, e.op)};
    return;
  }
  e.build = kernels::candidate_compile(*e.manifest, kernels::CompileOptions::defaults());
  if (!e.build.ok) {
    e.setup = {Verdict::kCompileError, e.build.reason};
    return;
  }
  if (e.manifest->backend != DeviceKind::kCpu && e.manifest->backend != backend_.kind()) {
    const std::string kind(device_kind_name(e.manifest->backend));
    e.setup = {Verdict::kUnsupported,
               fmt::format("a {0} candidate runs only in a job on the {0} backend, and this job runs on {1} (it "
                           "compiled; it was not run): judge it where a {0} device is, with `backend: {0}` or "
                           "`fk check --backend {0}`",
                           kind, backend_.name())};
    return;
  }
  e.runnable = true;  // loading happens in its worker, never here
}

const kernels::OpImpl& CandidateStage::model_baseline(const std::string& op) const {
  return kernels::OpRegistry::global().impl(op, std::string(device_kind_name(backend_.kind())));
}

kernels::Backend* CandidateStage::device_of(const Entry& e) const {
  return e.manifest && e.manifest->backend != DeviceKind::kCpu ? &backend_ : nullptr;
}

void CandidateStage::build() {
  // The leader builds first; the others then find the libraries in the cache.
  if (group_.rank() == 0)
    for (auto& e : entries_) build_one(e);
  group_.barrier();
  if (group_.rank() != 0)
    for (auto& e : entries_) build_one(e);
}

void CandidateStage::check(const std::vector<InstanceRecord>& instances) { gate(instances); }

std::vector<int32_t> CandidateStage::gate(const std::vector<InstanceRecord>& instances) {
  // One rank per pipeline stage checks that stage's instances (TP and DP peers hold
  // the same shapes).
  const bool checker = pl_.tp_rank == 0 && pl_.dp_rank == 0;
  std::vector<int32_t> blocked(entries_.size(), 0);
  // Every rank looks for the sanitizer before any collective, so that all fail alike.
  std::string sanitizer;
  const std::string& tool = job_.kernel_stage.sanitize;
  if (!tool.empty() && !entries_.empty()) {
    std::string why;
    sanitizer = kernels::compute_sanitizer_path(&why);
    if (sanitizer.empty())
      fail(ErrorKind::kNotFound, "kernel_stage.sanitize: {} was asked for and {}", tool, why);
  }
  for (size_t k = 0; k < entries_.size(); ++k) {
    Entry& e = entries_[k];
    if (!e.runnable) {
      blocked[k] = 1;
      continue;
    }
    if (!checker) continue;
    std::vector<InstanceRecord> mine;
    CandidateCheckOptions o;
    for (const auto& i : instances)
      if (i.op == e.op) {
        mine.push_back(i);
        o.timed.push_back(i.measured);
      }
    o.worker = kernels::worker_executable_path();
    o.instance_time_limit_s = job_.kernel_stage.instance_time_limit_s;
    o.threads = threads_;
    o.gate.rounds = std::max<int64_t>(2, job_.kernel_stage.rounds);
    o.gate.warmup = job_.kernel_stage.warmup;
    o.gate.iterations = job_.kernel_stage.iterations;
    o.gate.seed = job_.seed;
    o.device = device_of(e);
    if (o.device != nullptr && !sanitizer.empty()) {  // device code is what the tool checks
      o.sanitizer = sanitizer;
      o.sanitizer_tool = tool;
    }
    CandidateCheck check = candidate_check(*e.manifest, e.build.library, mine, o);
    e.results = std::move(check.results);
    e.sandbox = std::move(check.sandbox);
    for (const auto& r : e.results)
      if (!candidate_may_join_model(r.verdict.verdict, r.verdict.reason)) blocked[k] = 1;
  }
  if (!entries_.empty())
    group_.all_reduce(blocked.data(), blocked.data(), blocked.size(), DType::kI32, collectives::ReduceOp::kMax);
  return blocked;
}

std::optional<ImplSet> CandidateStage::select(const std::vector<InstanceRecord>& instances) {
  const std::vector<int32_t> blocked = gate(instances);
  ImplSet set = baseline_set();
  bool any = false;
  for (size_t k = 0; k < entries_.size(); ++k) {
    if (blocked[k]) continue;
    Entry& e = entries_[k];
    kernels::WorkerConfig wc;
    wc.executable = kernels::worker_executable_path();
    wc.library = e.build.library;
    wc.name = e.manifest->name;
    wc.op = e.op;
    wc.entry = e.manifest->entry;
    wc.threads = threads_;
    wc.time_limit_s = job_.kernel_stage.instance_time_limit_s;
    wc.on_wait = [] { progress_tick(); };
    wc.device = device_of(e);
    try {
      auto w = std::make_shared<kernels::Worker>(wc);
      const auto loaded = w->load();
      if (!loaded) {
        *e.model_failure = kernels::worker_failure_verdict(*w, "loading for the model stage");
      } else if (loaded->code != 0) {
        *e.model_failure = {"RUNTIME_ERROR", "cannot load for the model stage: " + loaded->message};
      } else {
        workers_.push_back(w);
        auto impl = std::make_shared<kernels::OpImpl>(
            kernels::worker_op_impl(w, model_baseline(e.op), e.model_failure, &backend_));
        owned_.push_back(impl);
        set.set(e.op, impl.get());
      }
    } catch (const Error& err) {
      *e.model_failure = {"RUNTIME_ERROR", fmt::format("cannot start its worker for the model stage: {}", err.what())};
    }
    e.in_model = true;  // every rank takes part in the selected run, with the baseline where it could not
    any = true;
  }
  if (!any) return std::nullopt;
  return set;
}

ImplSet CandidateStage::baseline_set() {
  ImplSet set = ImplSet::baseline(backend_.kind());
  for (const Entry& e : entries_) {
    if (!kernels::OpRegistry::global().find(e.op)) continue;
    kernels::WorkerConfig wc;
    wc.executable = kernels::worker_executable_path();
    wc.name = "baseline";
    wc.op = e.op;
    wc.threads = threads_;
    wc.time_limit_s = job_.kernel_stage.instance_time_limit_s;
    wc.on_wait = [] { progress_tick(); };
    wc.device = e.runnable ? device_of(e) : nullptr;  // the same device as the candidate's
    auto w = std::make_shared<kernels::Worker>(wc);
    const auto started = w->load();
    if (!started || started->code != 0) fail(ErrorKind::kRuntime, "the baseline worker did not start: {}", w->failure());
    workers_.push_back(w);
    // The baseline worker runs our own code: its failure is an error of the run, not of a candidate.
    auto failure = std::make_shared<kernels::RemoteFailure>();
    auto impl = std::make_shared<kernels::OpImpl>(
        kernels::worker_op_impl(w, model_baseline(e.op), failure, &backend_));
    owned_.push_back(impl);
    set.set(e.op, impl.get());
  }
  return set;
}

std::string CandidateStage::devices() const {
  bool host = false, device = false;
  for (const Entry& e : entries_) {
    if (!e.runnable) continue;
    (device_of(e) ? device : host) = true;
  }
  const std::string dev(device_kind_name(backend_.kind()));
  if (host && device) return "cpu and " + dev;
  return device ? dev : host ? "cpu" : "none";
}

std::vector<results::CandidateInstanceRecord> CandidateStage::records() const {
  std::vector<results::CandidateInstanceRecord> out;
  for (const auto& e : entries_) {
    const std::string name = e.manifest ? e.manifest->name : e.folder;
    for (const auto& r : e.results) {
      results::CandidateInstanceRecord c;
      c.candidate = name;
      c.op = r.instance.op;
      c.role = r.instance.role;
      c.shape = kernel_shape_string(r.instance.shape);
      c.params = kernel_params_string(r.instance.shape);
      c.dtype = std::string(dtype_name(r.instance.dtype));
      c.rank = group_.rank();
      c.verdict = std::string(kernels::verdict_name(r.verdict.verdict));
      c.reason = r.verdict.reason;
      c.rel_l2 = r.rel_l2;
      c.max_abs = r.max_abs;
      c.matched_fraction = r.matched_fraction;
      c.baseline_rel_l2 = r.baseline_rel_l2;
      c.nan = r.nan;
      c.inf = r.inf;
      c.candidate_median_s = r.candidate_median_s;
      c.baseline_median_s = r.baseline_median_s;
      c.speedup = r.speedup;
      c.reuse_ratio = r.reuse_ratio;
      c.candidate_s = r.candidate_s;
      c.baseline_s = r.baseline_s;
      c.candidate_span_s = r.candidate_span_s;
      c.candidate_wall_s = r.candidate_wall_s;
      c.baseline_wall_s = r.baseline_wall_s;
      c.door_s = r.door_s;
      c.clock_excess_s = r.clock_excess_s;
      c.clock_allowance_s = r.clock_allowance_s;
      c.clock_charged_s = r.clock_charged_s;
      out.push_back(std::move(c));
    }
    if (!e.model_failure->verdict.empty()) {  // the candidate failed inside the model stage on this rank
      results::CandidateInstanceRecord c;
      c.candidate = name;
      c.op = e.op;
      c.role = "model-stage";
      c.rank = group_.rank();
      c.verdict = e.model_failure->verdict;
      c.reason = e.model_failure->reason;
      c.matched_fraction = 0;
      out.push_back(std::move(c));
    }
  }
  return out;
}

namespace {

// Relative error of the last traced layer (prefill) of `run`, summed over ranks.
double last_layer_error(const std::vector<results::LayerError>& layers, const std::string& run) {
  int64_t last = -1;
  for (const auto& e : layers)
    if (e.run == run && e.step == "prefill") last = std::max(last, e.layer);
  double err = 0, ref = 0;
  for (const auto& e : layers)
    if (e.run == run && e.step == "prefill" && e.layer == last) {
      err += e.err_vs_fp32;
      ref += e.ref_fp32;
    }
  return ref > 0 ? std::sqrt(err / ref) : std::nan("");
}

double top1(const std::vector<results::LogitStats>& logits, const std::string& run) {
  int64_t match = 0, n = 0;
  for (const auto& l : logits)
    if (l.run == run) {
      match += l.top1_match_fp32;
      n += l.sequences;
    }
  return n > 0 ? static_cast<double>(match) / static_cast<double>(n) : std::nan("");
}

int64_t top1_samples(const std::vector<results::LogitStats>& logits, const std::string& run) {
  int64_t n = 0;
  for (const auto& l : logits)
    if (l.run == run) n += l.sequences;
  return n;
}

// The greedy-token rule, from the baseline's own spread: the baseline (production
// precision) already changes a fraction p of the fp32 model's greedy tokens; a
// candidate may change at most 2p, plus three binomial standard deviations of that
// rate over the n samples, plus one sample. Returns the largest allowed flip rate.
double top1_allowed_flips(double base_top1, int64_t n) {
  const double p = std::clamp(1.0 - base_top1, 0.0, 1.0);
  const double nn = static_cast<double>(std::max<int64_t>(1, n));
  const double q = std::max(p, 1.0 / nn);
  return 2 * p + 3 * std::sqrt(q * (1 - std::min(q, 1.0)) / nn + 1e-12) + 1.0 / nn;
}

// Sum of the KL divergences to the fp32 run's logits (NaN or Inf when logits are).
double kl_sum(const std::vector<results::LogitStats>& logits, const std::string& run) {
  double s = 0;
  for (const auto& l : logits)
    if (l.run == run) s += l.kl_sum_fp32;
  return s;
}

}  // namespace

std::vector<results::CandidateSummary> CandidateStage::summarize(
    const std::vector<results::CandidateInstanceRecord>& all, const std::vector<results::LayerError>& layers,
    const std::vector<results::LogitStats>& logits, const std::vector<results::StepTiming>& steps) const {
  std::vector<results::CandidateSummary> out;
  const double sel_err = last_layer_error(layers, "selected"), base_err = last_layer_error(layers, "baseline");
  const double sel_top1 = top1(logits, "selected"), base_top1 = top1(logits, "baseline");
  // The end-to-end speedup of summary/jobs too (results/model_time.h): one definition.
  const double e2e_speedup = results::model_time_speedup(steps);
  const double sel_kl = kl_sum(logits, "selected"), base_kl = kl_sum(logits, "baseline");
  for (const auto& e : entries_) {
    results::CandidateSummary s;
    s.name = e.manifest ? e.manifest->name : e.folder;
    s.op = e.op;
    s.folder = e.folder;
    s.backend = e.manifest ? std::string(device_kind_name(e.manifest->backend)) : "";
    s.compiled = e.build.ok;
    s.cached = e.build.cached;
    s.compile_s = e.build.seconds;
    s.key = e.build.key;
    s.library = e.build.library;
    for (const auto& part : e.build.command) s.command += (s.command.empty() ? "" : " ") + part;
    s.compile_log = e.build.log;
    kernels::VerdictReason v = e.setup;
    double log_speedup = 0;
    int speedups = 0;
    bool any_instance = false;
    for (const auto& r : all) {
      if (r.candidate != s.name || r.op != e.op) continue;
      any_instance = true;
      v.merge(kernels::verdict_parse(r.verdict).value_or(Verdict::kRuntimeError),
              fmt::format("{} [{} {}]: {}", r.role, r.shape, r.dtype, r.reason));
      if (r.speedup > 0) {
        log_speedup += std::log(r.speedup);
        ++speedups;
      }
    }
    bool model_failed = false;
    for (const auto& r : all)
      if (r.candidate == s.name && r.op == e.op && r.role == "model-stage") model_failed = true;
    s.exercised = any_instance;
    s.sandbox = e.sandbox;
    if (v.verdict == Verdict::kPassed && !any_instance && e.setup.verdict == Verdict::kPassed)
      v.merge(Verdict::kUnsupported, fmt::format("the model has no '{}' call at this layout and workload", e.op));
    s.kernel_speedup = speedups > 0 ? std::exp(log_speedup / speedups) : std::nan("");
    const bool judged = e.in_model && !model_failed;  // the selected run measured this candidate
    s.model_rel_err = judged ? sel_err : std::nan("");
    s.baseline_rel_err = base_err;
    s.top1 = judged ? sel_top1 : std::nan("");
    s.baseline_top1 = base_top1;
    s.e2e_speedup = judged ? e2e_speedup : std::nan("");
    if (judged && !std::isfinite(sel_err) && std::isfinite(base_err))
      v.merge(Verdict::kIncorrectNumerical,
              "the model's hidden states went non-finite (NaN or Inf) with the candidate; the baseline's stayed finite");
    if (judged && !std::isfinite(sel_kl) && std::isfinite(base_kl))
      v.merge(Verdict::kIncorrectNumerical, "the model's logits went non-finite (NaN or Inf) with the candidate");
    // Model-level evidence: a kernel that passes every op but drifts over the layers.
    if (judged && std::isfinite(sel_err) && std::isfinite(base_err) && sel_err > 2.0 * base_err + 1e-3)
      v.merge(Verdict::kIncorrectNumerical,
              fmt::format("drifts over the layers: residual-stream error vs fp32 reaches {:.2e} at the last layer, "
                          "{:.1f}x the baseline's {:.2e} (bound 2x + 1e-3)",
                          sel_err, sel_err / base_err, base_err));
    const double allowed_flips = top1_allowed_flips(base_top1, top1_samples(logits, "baseline"));
    if (judged && std::isfinite(sel_top1) && std::isfinite(base_top1) && 1 - sel_top1 > allowed_flips)
      v.merge(Verdict::kIncorrectNumerical,
              fmt::format("greedy tokens disagree with the fp32 model: {:.0f}% agreement vs the baseline's {:.0f}% "
                          "(at most {:.0f}% of tokens may change: twice the baseline's rate plus sampling noise)",
                          100 * sel_top1, 100 * base_top1, 100 * allowed_flips));
    s.verdict = std::string(kernels::verdict_name(v.verdict));
    s.reason = v.reason;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fk::runner
