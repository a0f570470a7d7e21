#include "results/job_result.h"

#include "core/error.h"
#include "core/stats.h"
#include "results/h5/h5.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hdf5.h>
#include <limits>
#include <map>
#include <tuple>

namespace fk::results {
namespace {

using KernelInstanceResult = results::KernelInstanceResult;

std::string hdf5_version() {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  return fmt::format("{}.{}.{}", maj, min, rel);
}

void write_root_attrs(h5::Writer& w, const JobResult& r) {
  const spec::Job& j = r.job;
  w.set_attr("format", "fastkernels-job");
  w.set_attr("schema_version", kJobSchemaVersion);
  w.set_attr("job_id", j.id);
  w.set_attr("campaign", r.meta.campaign);
  w.set_attr("status", r.meta.status);
  w.set_attr("error", r.meta.error);
  w.set_attr("architecture", j.arch.name);
  w.set_attr("model_type", j.arch.model_type);
  w.set_attr("preset", j.arch.preset);
  w.set_attr("workload", j.workload.name);
  w.set_attr("phase", std::string(spec::phase_name(j.workload.phase)));
  w.set_attr("dtype", std::string(dtype_name(j.workload.dtype_for(j.arch))));
  w.set_attr("layout", j.layout.name());
  w.set_attr("tp", j.layout.tp);
  w.set_attr("pp", j.layout.pp);
  w.set_attr("dp", j.layout.dp);
  w.set_attr("ranks", j.layout.ranks());
  w.set_attr("candidate_set", j.candidates.name);
  w.set_attr("backend", std::string(device_kind_name(j.backend)));
  w.set_attr("seed", static_cast<int64_t>(j.seed));
  w.set_attr("repetition", j.repetition);
  w.set_attr("rank_hosts", r.meta.rank_hosts);
  w.set_attr("started_at", r.meta.started_at);
  w.set_attr("finished_at", r.meta.finished_at);
  w.set_attr("wall_s", r.meta.wall_s);
  w.set_attr("fk_version", r.meta.fk_version);
  w.set_attr("compiler", r.meta.compiler);
  w.set_attr("mpi_library", r.meta.mpi_library);
  w.set_attr("hdf5_version", hdf5_version());
  w.set_attr("blas", r.meta.blas);
  w.set_attr("device", r.meta.device);
  w.set_attr("device_state_start", r.meta.device_state_start);
  w.set_attr("device_state_end", r.meta.device_state_end);
  w.set_attr("stage_backends", r.meta.stage_backends);
  w.set_attr("threads_per_rank", r.meta.threads_per_rank);
  const std::string json = spec::job_to_json(j).dump();
  if (json.size() < 60000) {
    w.set_attr("job_json", json);
  } else {  // attributes are capped at 64 KiB: keep the bytes as a dataset instead
    std::vector<int32_t> bytes(json.begin(), json.end());
    w.write_array("job_json", bytes);
  }
}

void write_kernel_stage(h5::Writer& w, const JobResult& r) {
  h5::Group ks = w.require_group("kernel_stage");
  ks.set_attr("enabled", r.job.kernel_stage.enabled);
  ks.set_attr("warmup", r.job.kernel_stage.warmup);
  ks.set_attr("iterations", r.job.kernel_stage.iterations);
  ks.set_attr("rounds", r.job.kernel_stage.rounds);
  // Merge per-rank results of the same instance: precision worst-case, timings stacked.
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, std::vector<const KernelInstanceResult*>>
      by_instance;
  std::vector<std::tuple<std::string, std::string, std::string, std::string, std::string>> order;
  for (const auto& k : r.kernels) {
    auto key = std::make_tuple(k.op, k.role, k.shape, k.params, std::string(dtype_name(k.dtype)));
    if (!by_instance.count(key)) order.push_back(key);
    by_instance[key].push_back(&k);
  }
  std::vector<int64_t> index, calls, nan, inf, rounds, sets, nranks, iters, throttled;
  std::vector<std::string> op, role, impl, dtype, shape, params, layers;
  std::vector<double> flops, bytes, rel_l2, max_abs, matched, atol, rtol, median, p10, p90, mean, min, noise;
  std::vector<bool> passed;
  h5::Group timings = ks.require_group("timings");
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& rows = by_instance[order[i]];
    const KernelInstanceResult& f = *rows.front();
    index.push_back(static_cast<int64_t>(i));
    op.push_back(f.op);
    role.push_back(f.role);
    impl.push_back(f.impl);
    dtype.push_back(std::string(dtype_name(f.dtype)));
    shape.push_back(f.shape);
    params.push_back(f.params);
    layers.push_back(fmt::format("{}", fmt::join(f.layers, ",")));
    calls.push_back(f.calls_per_step);
    flops.push_back(f.flops);
    bytes.push_back(f.bytes);
    atol.push_back(f.atol);
    rtol.push_back(f.rtol);
    sets.push_back(f.buffer_sets);
    int64_t n_throttled = 0;
    double worst_l2 = 0, worst_abs = 0, worst_match = 1;
    int64_t n_nan = 0, n_inf = 0;
    bool ok = true;
    std::vector<double> all;
    std::vector<int64_t> ranks;
    size_t width = 0;
    for (const auto* k : rows) width = std::max(width, k->seconds.size());
    std::vector<double> matrix;
    for (const auto* k : rows) {
      worst_l2 = std::max(worst_l2, k->rel_l2);
      worst_abs = std::max(worst_abs, k->max_abs);
      worst_match = std::min(worst_match, k->matched_fraction);
      n_nan += k->nan;
      n_inf += k->inf;
      ok = ok && k->passed;
      n_throttled += k->throttled;
      all.insert(all.end(), k->seconds.begin(), k->seconds.end());
      ranks.push_back(k->rank);
      for (size_t t = 0; t < width; ++t)
        matrix.push_back(t < k->seconds.size() ? k->seconds[t] : std::numeric_limits<double>::quiet_NaN());
    }
    throttled.push_back(n_throttled);
    rel_l2.push_back(worst_l2);
    max_abs.push_back(worst_abs);
    matched.push_back(worst_match);
    nan.push_back(n_nan);
    inf.push_back(n_inf);
    passed.push_back(ok);
    rounds.push_back(f.rounds);
    nranks.push_back(static_cast<int64_t>(rows.size()));
    iters.push_back(static_cast<int64_t>(width));
    const stats::Summary sum = stats::summarize(all);
    median.push_back(sum.median);
    p10.push_back(sum.p10);
    p90.push_back(sum.p90);
    mean.push_back(sum.mean);
    min.push_back(sum.min);
    noise.push_back(sum.noise);
    h5::Dataset ds = timings.write_array(fmt::format("{:04d}", i), matrix,
                                         Shape{static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)});
    ds.set_attr("ranks", ranks);
    ds.set_attr("op", f.op);
    ds.set_attr("role", f.role);
    ds.set_attr("unit", "seconds");
  }
  ks.write_table("instances", h5::Table()
                                  .add_column("index", index)
                                  .add_column("op", op)
                                  .add_column("role", role)
                                  .add_column("impl", impl)
                                  .add_column("dtype", dtype)
                                  .add_column("shape", shape)
                                  .add_column("params", params)
                                  .add_column("layers", layers)
                                  .add_column("calls_per_step", calls)
                                  .add_column("flops", flops)
                                  .add_column("bytes", bytes)
                                  .add_column("rel_l2", rel_l2)
                                  .add_column("max_abs", max_abs)
                                  .add_column("matched_fraction", matched)
                                  .add_column("nan", nan)
                                  .add_column("inf", inf)
                                  .add_column("rounds", rounds)
                                  .add_column("passed", passed)
                                  .add_column("atol", atol)
                                  .add_column("rtol", rtol)
                                  .add_column("buffer_sets", sets)
                                  .add_column("ranks", nranks)
                                  .add_column("iterations", iters)
                                  .add_column("median_s", median)
                                  .add_column("p10_s", p10)
                                  .add_column("p90_s", p90)
                                  .add_column("mean_s", mean)
                                  .add_column("min_s", min)
                                  .add_column("noise", noise)
                                  .add_column("throttled", throttled));
}

void write_model_stage(h5::Writer& w, const JobResult& r) {
  h5::Group ms = w.require_group("model_stage");
  ms.set_attr("enabled", r.job.model_stage.enabled);
  ms.set_attr("iterations", r.job.model_stage.iterations);
  ms.set_attr("traced_rows_per_sequence", r.traced_rows_per_sequence);
  {
    std::vector<std::string> run, step;
    std::vector<int64_t> it, rank;
    std::vector<double> total, compute, comm;
    std::vector<bool> graph;
    for (const auto& s : r.steps) {
      graph.push_back(s.graph);
      run.push_back(s.run);
      it.push_back(s.iteration);
      step.push_back(s.step);
      rank.push_back(s.rank);
      total.push_back(s.total_s);
      compute.push_back(s.compute_s);
      comm.push_back(s.comm_s);
    }
    ms.write_table("steps", h5::Table()
                                .add_column("run", run)
                                .add_column("iteration", it)
                                .add_column("step", step)
                                .add_column("rank", rank)
                                .add_column("total_s", total)
                                .add_column("compute_s", compute)
                                .add_column("comm_s", comm)
                                .add_column("graph", graph));
  }
  {
    ms.set_attr("memory_estimate_bytes", r.memory_estimate_bytes);
    if (!r.reference_weights.empty()) ms.set_attr("reference_weights", r.reference_weights);
    std::vector<std::string> run, device;
    std::vector<int64_t> rank, in_use, reserved;
    for (const auto& m : r.memory) {
      run.push_back(m.run);
      rank.push_back(m.rank);
      device.push_back(m.device);
      in_use.push_back(m.peak_in_use_bytes);
      reserved.push_back(m.peak_reserved_bytes);
    }
    ms.write_table("memory", h5::Table()
                                 .add_column("run", run)
                                 .add_column("rank", rank)
                                 .add_column("device", device)
                                 .add_column("peak_in_use_bytes", in_use)
                                 .add_column("peak_reserved_bytes", reserved));
  }
  {
    std::vector<std::string> run, step, op, role;
    std::vector<int64_t> it, rank, layer, calls;
    std::vector<bool> comm;
    std::vector<double> secs, bytes;
    for (const auto& o : r.ops) {
      run.push_back(o.run);
      it.push_back(o.iteration);
      step.push_back(o.step);
      rank.push_back(o.rank);
      layer.push_back(o.layer);
      op.push_back(o.op);
      role.push_back(o.role);
      comm.push_back(o.comm);
      calls.push_back(o.calls);
      secs.push_back(o.seconds);
      bytes.push_back(o.bytes);
    }
    ms.write_table("ops", h5::Table()
                              .add_column("run", run)
                              .add_column("iteration", it)
                              .add_column("step", step)
                              .add_column("rank", rank)
                              .add_column("layer", layer)
                              .add_column("op", op)
                              .add_column("role", role)
                              .add_column("comm", comm)
                              .add_column("calls", calls)
                              .add_column("seconds", secs)
                              .add_column("bytes", bytes));
  }
  {
    std::map<std::tuple<std::string, std::string, int64_t>, LayerError> merged;
    for (const auto& e : r.layers) {
      auto& m = merged[std::make_tuple(e.run, e.step, e.layer)];
      m.run = e.run;
      m.step = e.step;
      m.layer = e.layer;
      m.err_vs_fp32 += e.err_vs_fp32;
      m.ref_fp32 += e.ref_fp32;
      m.err_vs_baseline += e.err_vs_baseline;
      m.ref_baseline += e.ref_baseline;
      m.rows += e.rows;
    }
    std::vector<std::string> run, step;
    std::vector<int64_t> layer, rows;
    std::vector<double> vs32, vsb;
    for (const auto& [k, e] : merged) {
      run.push_back(e.run);
      step.push_back(e.step);
      layer.push_back(e.layer);
      rows.push_back(e.rows);
      vs32.push_back(e.ref_fp32 > 0 ? std::sqrt(e.err_vs_fp32 / e.ref_fp32) : 0.0);
      vsb.push_back(e.ref_baseline > 0 ? std::sqrt(e.err_vs_baseline / e.ref_baseline) : std::nan(""));
    }
    ms.write_table("layers", h5::Table()
                                 .add_column("run", run)
                                 .add_column("step", step)
                                 .add_column("layer", layer)
                                 .add_column("rel_err_vs_fp32", vs32)
                                 .add_column("rel_err_vs_baseline", vsb)
                                 .add_column("rows", rows));
  }
  {
    std::map<std::tuple<std::string, std::string>, LogitStats> merged;
    for (const auto& l : r.logits) {
      auto& m = merged[std::make_tuple(l.run, l.step)];
      m.run = l.run;
      m.step = l.step;
      m.sequences += l.sequences;
      m.top1_match_fp32 += l.top1_match_fp32;
      m.top1_match_baseline += l.top1_match_baseline;
      m.kl_sum_fp32 += l.kl_sum_fp32;
      m.kl_sum_baseline += l.kl_sum_baseline;
    }
    std::vector<std::string> run, step;
    std::vector<int64_t> seqs;
    std::vector<double> t32, tb, k32, kb;
    for (const auto& [k, l] : merged) {
      const double n = static_cast<double>(std::max<int64_t>(1, l.sequences));
      run.push_back(l.run);
      step.push_back(l.step);
      seqs.push_back(l.sequences);
      t32.push_back(static_cast<double>(l.top1_match_fp32) / n);
      tb.push_back(static_cast<double>(l.top1_match_baseline) / n);
      k32.push_back(l.kl_sum_fp32 / n);
      kb.push_back(l.kl_sum_baseline / n);
    }
    ms.write_table("logits", h5::Table()
                                 .add_column("run", run)
                                 .add_column("step", step)
                                 .add_column("sequences", seqs)
                                 .add_column("top1_vs_fp32", t32)
                                 .add_column("top1_vs_baseline", tb)
                                 .add_column("kl_vs_fp32", k32)
                                 .add_column("kl_vs_baseline", kb));
  }
  if (r.fp32_logits.defined()) {
    h5::Dataset d = ms.write_array("fp32_logits", DType::kF32, r.fp32_logits.shape(), r.fp32_logits.data(),
                                     static_cast<size_t>(r.fp32_logits.numel()));
    d.set_attr("dims", std::vector<std::string>{"step", "sequence", "vocab"});
  }
}

void write_candidates(h5::Writer& w, const JobResult& r) {
  h5::Group cg = w.require_group("candidates");
  cg.set_attr("candidate_set", r.job.candidates.name);
  {
    std::vector<std::string> name, op, backend, folder, verdict, reason, key, library, command, sandbox;
    std::vector<bool> compiled, cached, exercised;
    std::vector<double> compile_s, model_err, base_err, top1, base_top1, e2e, kspeed;
    h5::Group logs = cg.require_group("compile_logs");
    for (const auto& c : r.candidates) {
      name.push_back(c.name);
      op.push_back(c.op);
      backend.push_back(c.backend);
      folder.push_back(c.folder);
      verdict.push_back(c.verdict);
      reason.push_back(c.reason);
      key.push_back(c.key);
      library.push_back(c.library);
      command.push_back(c.command);
      sandbox.push_back(c.sandbox);
      compiled.push_back(c.compiled);
      cached.push_back(c.cached);
      exercised.push_back(c.exercised);
      compile_s.push_back(c.compile_s);
      model_err.push_back(c.model_rel_err);
      base_err.push_back(c.baseline_rel_err);
      top1.push_back(c.top1);
      base_top1.push_back(c.baseline_top1);
      e2e.push_back(c.e2e_speedup);
      kspeed.push_back(c.kernel_speedup);
      const std::string log = c.compile_log.size() > 60000 ? c.compile_log.substr(0, 60000) + "\n[truncated]"
                                                           : c.compile_log;
      logs.set_attr(c.name.empty() ? c.op : c.name, log);
    }
    cg.write_table("summary", h5::Table()
                                  .add_column("candidate", name)
                                  .add_column("op", op)
                                  .add_column("backend", backend)
                                  .add_column("folder", folder)
                                  .add_column("verdict", verdict)
                                  .add_column("reason", reason)
                                  .add_column("compiled", compiled)
                                  .add_column("compile_cached", cached)
                                  .add_column("exercised", exercised)
                                  .add_column("compile_s", compile_s)
                                  .add_column("build_key", key)
                                  .add_column("library", library)
                                  .add_column("compile_command", command)
                                  .add_column("sandbox", sandbox)
                                  .add_column("model_rel_err", model_err)
                                  .add_column("baseline_model_rel_err", base_err)
                                  .add_column("top1_vs_fp32", top1)
                                  .add_column("baseline_top1_vs_fp32", base_top1)
                                  .add_column("e2e_speedup", e2e)
                                  .add_column("kernel_speedup_geomean", kspeed));
  }
  std::vector<std::string> cand, op, role, shape, params, dtype, verdict, reason;
  std::vector<int64_t> rank, nan, inf, iters;
  std::vector<double> rel, mabs, matched, brel, cmed, bmed, speed, reuse, door, excess, allowance, charged;
  h5::Group timings = cg.require_group("timings");
  for (size_t i = 0; i < r.candidate_instances.size(); ++i) {
    const auto& c = r.candidate_instances[i];
    cand.push_back(c.candidate);
    op.push_back(c.op);
    role.push_back(c.role);
    shape.push_back(c.shape);
    params.push_back(c.params);
    dtype.push_back(c.dtype);
    verdict.push_back(c.verdict);
    reason.push_back(c.reason);
    rank.push_back(c.rank);
    nan.push_back(c.nan);
    inf.push_back(c.inf);
    rel.push_back(c.rel_l2);
    mabs.push_back(c.max_abs);
    matched.push_back(c.matched_fraction);
    brel.push_back(c.baseline_rel_l2);
    cmed.push_back(c.candidate_median_s);
    bmed.push_back(c.baseline_median_s);
    speed.push_back(c.speedup);
    reuse.push_back(c.reuse_ratio);
    door.push_back(c.door_s);
    excess.push_back(c.clock_excess_s);
    allowance.push_back(c.clock_allowance_s);
    charged.push_back(c.clock_charged_s);
    iters.push_back(static_cast<int64_t>(c.candidate_s.size()));
    if (!c.candidate_s.empty()) {
      // Rows: candidate (charged) and baseline; a device candidate's also the spans its
      // worker reported and the supervisor's clock around each candidate and baseline call.
      const size_t n = c.candidate_s.size();
      std::vector<std::string> names{"candidate", "baseline"};
      std::vector<const std::vector<double>*> rows{&c.candidate_s, &c.baseline_s};
      if (c.candidate_span_s.size() == n && c.candidate_wall_s.size() == n && c.baseline_wall_s.size() == n) {
        names.insert(names.end(), {"candidate_span", "candidate_wall", "baseline_wall"});
        rows.insert(rows.end(), {&c.candidate_span_s, &c.candidate_wall_s, &c.baseline_wall_s});
      }
      std::vector<double> all;
      for (size_t k = 0; k < rows.size(); ++k) {
        if (rows[k]->size() != n)
          fail(ErrorKind::kInternal, "candidate instance {}: {} '{}' timings for {} candidate ones", i, rows[k]->size(),
               names[k], n);
        all.insert(all.end(), rows[k]->begin(), rows[k]->end());
      }
      h5::Dataset d = timings.write_array(fmt::format("{:04d}", i), all,
                                          Shape{static_cast<int64_t>(rows.size()), static_cast<int64_t>(n)});
      d.set_attr("rows", names);
      d.set_attr("unit", "seconds");
    }
  }
  cg.write_table("instances", h5::Table()
                                  .add_column("candidate", cand)
                                  .add_column("op", op)
                                  .add_column("role", role)
                                  .add_column("shape", shape)
                                  .add_column("params", params)
                                  .add_column("dtype", dtype)
                                  .add_column("rank", rank)
                                  .add_column("verdict", verdict)
                                  .add_column("reason", reason)
                                  .add_column("rel_l2", rel)
                                  .add_column("max_abs", mabs)
                                  .add_column("matched_fraction", matched)
                                  .add_column("baseline_rel_l2", brel)
                                  .add_column("nan", nan)
                                  .add_column("inf", inf)
                                  .add_column("candidate_median_s", cmed)
                                  .add_column("baseline_median_s", bmed)
                                  .add_column("speedup", speed)
                                  .add_column("reuse_ratio", reuse)
                                  .add_column("door_s", door)
                                  .add_column("clock_excess_s", excess)
                                  .add_column("clock_allowance_s", allowance)
                                  .add_column("clock_charged_s", charged)
                                  .add_column("iterations", iters));
}

}  // namespace

void job_result_write(const std::string& path, const JobResult& result) {
  h5::Writer w(path);
  write_root_attrs(w, result);
  write_kernel_stage(w, result);
  write_model_stage(w, result);
  if (!result.candidates.empty()) write_candidates(w, result);
  w.commit();
}

}  // namespace fk::results
