#include "results/campaign/synthetic_job.h"

#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace fk::results {

const std::vector<std::string>& synthetic_ops() {
  static const std::vector<std::string> ops = {"rms_norm",  "linear",         "silu_and_mul", "attention",
                                               "rotary_embedding", "fused_add_rms_norm", "embedding"};
  return ops;
}

JobResult synthetic_job(const SyntheticJobSpec& s) {
  JobResult r;
  spec::Job& j = r.job;
  j.id = s.id;
  j.arch.name = s.architecture;
  j.arch.model_type = s.model_type;
  j.arch.family = s.family;
  j.arch.preset = "tiny";
  j.arch.num_hidden_layers = s.layers;
  j.workload.name = s.workload;
  j.workload.phase = spec::Phase::kPrefill;
  j.workload.batch = 4;
  j.workload.seq_len = 16;
  j.workload.decode_steps = s.decode_steps;
  j.layout = spec::Layout{s.tp, s.pp, s.dp};
  j.candidates.name = s.candidate_set;
  for (size_t c = 0; c < s.candidate_verdicts.size(); ++c)
    j.candidates.ops[synthetic_ops()[c % synthetic_ops().size()]] = "/candidates/" + std::to_string(c);
  j.seed = 7;
  j.kernel_stage.iterations = s.iterations;
  j.model_stage.iterations = s.model_iterations;
  r.meta.campaign = s.campaign;
  r.meta.status = s.status;
  r.meta.error = s.status == "completed" ? "" : "synthetic failure";
  r.meta.started_at = "2025-01-01T00:00:00Z";
  r.meta.finished_at = "2025-01-01T00:00:10Z";
  r.meta.wall_s = 10;
  r.meta.fk_version = "0.1.0";
  r.meta.device = "cpu: synthetic";
  const int64_t ranks = s.tp * s.pp * s.dp;
  for (int64_t k = 0; k < ranks; ++k) r.meta.rank_hosts.push_back("host");

  std::mt19937_64 rng(s.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto sample = [&](double base) { return base * s.time_scale * std::exp(s.noise * normal(rng)); };

  for (int64_t i = 0; i < s.instances; ++i) {
    for (int64_t k = 0; k < ranks; ++k) {
      KernelInstanceResult ki;
      ki.op = synthetic_ops()[static_cast<size_t>(i) % synthetic_ops().size()];
      ki.role = "role." + std::to_string(i);
      ki.impl = "cpu";
      ki.shape = "tokens=64,hidden=" + std::to_string(128 * (i + 1));
      ki.params = "1e-05";
      ki.dtype = DType::kBF16;
      ki.calls_per_step = 2;
      ki.layers = {0, 1};
      ki.flops = 1e6;
      ki.bytes = 1e5;
      ki.rel_l2 = 1e-3 * static_cast<double>(1 + i % 3) * s.rel_l2_scale;
      ki.max_abs = 1e-2;
      ki.matched_fraction = 1;
      ki.rounds = 1;
      ki.passed = std::find(s.failing_instances.begin(), s.failing_instances.end(), i) == s.failing_instances.end();
      if (!ki.passed) ki.matched_fraction = 0.5;
      ki.atol = ki.rtol = 1e-2;
      ki.rank = k;
      const double base = 10e-6 * static_cast<double>(1 + i);
      for (int64_t t = 0; t < s.iterations; ++t) ki.seconds.push_back(sample(base));
      r.kernels.push_back(std::move(ki));
    }
  }

  std::vector<std::string> runs = {"fp32", "baseline"};
  if (!s.candidate_verdicts.empty()) runs.push_back("selected");
  std::vector<std::string> steps = {"prefill"};
  for (int64_t d = 0; d < s.decode_steps; ++d) steps.push_back("decode." + std::to_string(d));
  const std::vector<std::string> roles = {"attn.qkv_proj", "attn.attention", "mlp.gate_up_proj", "mlp.down_proj"};
  // Peak memory: the fp32 run holds twice what the others do, rank k 4 KiB more than rank 0.
  r.memory_estimate_bytes = 2 * s.layers * (int64_t{1} << 20);
  for (const std::string& run : runs)
    for (int64_t k = 0; k < ranks; ++k) {
      const int64_t in_use = (run == "fp32" ? 2 : 1) * s.layers * (int64_t{1} << 20) + k * 4096;
      r.memory.push_back({run, k, "cpu", in_use, in_use + in_use / 4});
    }
  for (const std::string& run : runs) {
    const double run_scale = run == "selected" ? 1.0 / s.e2e_speedup : 1.0;
    for (int64_t it = 0; it < s.model_iterations; ++it)
      for (size_t st = 0; st < steps.size(); ++st)
        for (int64_t k = 0; k < ranks; ++k) {
          const double base = (st == 0 ? 2e-3 : 5e-4) * static_cast<double>(s.layers) * run_scale;
          StepTiming t;
          t.run = run;
          t.iteration = it;
          t.step = steps[st];
          t.rank = k;
          t.total_s = sample(base);
          t.comm_s = ranks > 1 ? 0.15 * t.total_s : 0;
          t.compute_s = 0.8 * t.total_s;
          r.steps.push_back(t);
          for (int64_t l = 0; l < s.layers; ++l)
            for (const std::string& role : roles) {
              OpTiming o;
              o.run = run;
              o.iteration = it;
              o.step = steps[st];
              o.rank = k;
              o.layer = l;
              o.op = role == "attn.attention" ? "attention" : "linear";
              o.role = role;
              o.calls = 1;
              o.seconds = t.compute_s / static_cast<double>(s.layers * 4);
              r.ops.push_back(o);
            }
        }
    if (run == "fp32") continue;
    for (const std::string& step : steps) {
      for (int64_t l = 0; l < s.layers; ++l) {
        LayerError e;
        e.run = run;
        e.step = step;
        e.layer = l;
        const double err = 1e-3 * static_cast<double>(l + 1) * s.layer_err_scale;
        e.err_vs_fp32 = err * err;
        e.ref_fp32 = 1;
        e.err_vs_baseline = run == "baseline" ? 0 : err * err / 4;
        e.ref_baseline = run == "baseline" ? 0 : 1;
        e.rows = 4;
        r.layers.push_back(e);
      }
      LogitStats g;
      g.run = run;
      g.step = step;
      g.sequences = 4;
      g.top1_match_fp32 = 4;
      g.top1_match_baseline = 4;
      g.kl_sum_fp32 = 4e-4 * s.layer_err_scale;
      g.kl_sum_baseline = run == "baseline" ? 0 : 1e-4;
      r.logits.push_back(g);
    }
  }

  for (size_t c = 0; c < s.candidate_verdicts.size(); ++c) {
    const std::string op = synthetic_ops()[c % synthetic_ops().size()];
    CandidateSummary cs;
    cs.name = "cand-" + op;
    cs.op = op;
    cs.backend = "cpu";
    cs.folder = "/candidates/" + std::to_string(c);
    cs.verdict = s.candidate_verdicts[c];
    cs.reason = cs.verdict == "PASSED" ? "" : "synthetic " + cs.verdict;
    cs.compiled = cs.verdict != "COMPILE_ERROR";
    cs.exercised = cs.verdict != "UNSUPPORTED" && cs.verdict != "COMPILE_ERROR";
    if (cs.verdict == "UNSUPPORTED") cs.reason = "the model has no '" + op + "' call at this layout and workload";
    cs.model_rel_err = 4e-3 * s.layer_err_scale;
    cs.baseline_rel_err = 4e-3;
    cs.top1 = cs.baseline_top1 = 1;
    cs.e2e_speedup = s.e2e_speedup;
    cs.kernel_speedup = 1.5;
    r.candidates.push_back(cs);
    for (int64_t k = 0; k < ranks; ++k) {
      CandidateInstanceRecord ci;
      ci.candidate = cs.name;
      ci.op = op;
      ci.role = "role.c" + std::to_string(c);
      ci.shape = "tokens=64,hidden=128";
      ci.params = "1e-05";
      ci.dtype = "bf16";
      ci.rank = k;
      ci.verdict = cs.verdict;
      ci.reason = cs.reason;
      ci.rel_l2 = 2e-3 * s.rel_l2_scale;
      ci.baseline_rel_l2 = 2e-3;
      for (int64_t t = 0; t < s.iterations; ++t) {
        ci.candidate_s.push_back(sample(20e-6));
        ci.baseline_s.push_back(sample(30e-6));
      }
      ci.candidate_median_s = stats::median(ci.candidate_s);
      ci.baseline_median_s = stats::median(ci.baseline_s);
      ci.speedup = ci.baseline_median_s / ci.candidate_median_s;
      ci.reuse_ratio = 1;
      r.candidate_instances.push_back(ci);
    }
  }
  return r;
}

}  // namespace fk::results
