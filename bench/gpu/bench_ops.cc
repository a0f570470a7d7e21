// fk-bench-ops: every baseline op of a model's measured step, at the model's real shapes,
// timed on one backend the way the kernel stage times it (runner/kernel_stage.h,
// kernel_instance_time: rotated input sets, cache flush, in-place arguments restored,
// the measurement driver), against the device's copy bandwidth measured in the same run
// through the same driver. A benchmark tool, not part of the judge.
//
//   fk-bench-ops --arch specs/architectures/llama-3.1-8b.yaml --workload specs/workloads/prefill-512.yaml
//                [--scale full] [--backend cuda] [--warmup 10] [--iterations 100] [--json ops.jsonl]
//                [--op fused_moe ...]
//
// Prints one row per op instance: median time, bytes moved and FLOPs (the op's own
// counts, OpDef::bytes / flops), achieved GB/s and its share of the copy bandwidth,
// TFLOP/s. --json writes the same rows (with the shape dims and params) for
// bench/gpu/ops_torch.py, which times torch eager and torch.compile on the same shapes.
//
// --device-span traces every timed call with the backend's tracer (CUDA: CUPTI). The
// figures are then the device's busy time in each call: the union of its device work's
// intervals (what triton.testing.do_bench times, whose flush lets the host enqueue a
// call's launches before the device reaches them: the launch's host overhead and
// latency left out). The span, first start to last end, is shown beside it: for a call
// of several launches it also holds the host time between them, which the tracer
// lengthens by hundreds of microseconds. Then the most kernels, copies and memsets one
// call ran; the names of one call's device work are listed after the table. The timed
// window (event to event, the column "window us") includes the tracer's cost per launch
// and is not a figure of the op.
// At the end the CUDA backend's cuDNN attention problems are listed (engine, workspace,
// or why declined), and its cuBLASLt problems (the configuration kept, and the time of
// each one tried).
//
// A fused_moe row is followed by cuBLASLt's time for the same FLOPs as dense GEMMs.
//
// The %size column compares each op with a copy moving as many bytes, timed the same way
// (flushed, busy time or window): a figure of what the op loses beyond a transfer's own fixed
// costs at that size.
#include "core/error.h"
#include "core/spec/spec_file.h"
#include "kernels/backends.h"
#include "kernels/cuda/ops/attention_cudnn.h"
#include "kernels/cuda/ops/linear_lt.h"
#include "kernels/measure.h"
#include "runner/kernel_stage.h"
#include "runner/model_stage.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <span>
#include <string>
#include <variant>

namespace {

using namespace fk;

template <typename Doc>
Doc load_doc(const std::string& file, const char* what) {
  spec::Diagnostics d;
  auto any = spec::spec_load_file(file, d);
  if (!any) fail(ErrorKind::kInvalidArgument, "--{} {}: {}", what, file, d.to_string());
  if (!std::holds_alternative<Doc>(*any)) fail(ErrorKind::kInvalidArgument, "--{} {}: not a {} spec", what, file, what);
  return std::get<Doc>(*any);
}

// Median time of a device-to-device copy of a `bytes` buffer over the driver's timed
// calls. With `flush` the cache is flushed before every call (a copy that fits in the
// cache is then read from memory, as a rotated op instance's inputs are); with a tracer
// the figure is the span of each call's device work, as the op rows' are.
double copy_time(kernels::Backend& backend, int64_t bytes, int64_t warmup, int64_t iterations, bool flush,
                 kernels::DeviceTracer* tracer) {
  const Tensor src = backend.empty(DType::kU8, {bytes}), dst = backend.empty(DType::kU8, {bytes});
  backend.memset(src, 1);
  kernels::Subject s;
  s.name = "copy";
  s.run = [&](int64_t) { backend.copy(dst, src); };
  kernels::MeasureOptions mo;
  mo.warmup = warmup;
  mo.iterations = iterations;
  mo.tracer = tracer;
  const auto m = kernels::measure(backend, std::span(&s, 1), kernels::RotationPlan{1, flush}, mo);
  if (!m.audit.empty()) fail(ErrorKind::kRuntime, "copy bandwidth: {}", m.audit);
  return tracer ? m.subjects[0].busy_summary.median : m.subjects[0].summary.median;
}

int run(int argc, char** argv) {
  CLI::App app{"Times every baseline op of a model's measured step at its real shapes"};
  std::string arch_file, workload_file, scale = "full", backend_name = "cuda", json_file;
  int64_t warmup = 10, iterations = 100, copy_mib = 1024;
  uint64_t seed = 20261203;
  app.add_option("--arch", arch_file, "architecture spec (YAML)")->required();
  app.add_option("--workload", workload_file, "workload spec (YAML)")->required();
  app.add_option("--scale", scale, "preset of both specs (full = the published sizes)");
  app.add_option("--backend", backend_name, "cpu or cuda");
  app.add_option("--warmup", warmup, "untimed calls per instance")->check(CLI::NonNegativeNumber);
  app.add_option("--iterations", iterations, "timed calls per instance")->check(CLI::PositiveNumber);
  app.add_option("--copy-mib", copy_mib, "buffer size of the copy-bandwidth probe")->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "input seed");
  app.add_option("--json", json_file, "also write the rows as JSON lines here");
  std::vector<std::string> only_ops;
  app.add_option("--op", only_ops, "time only the rows of this op (repeatable; default: every op)");
  bool device_span = false;
  app.add_flag("--device-span", device_span, "also trace each call: the span of its device work and its activities");
  CLI11_PARSE(app, argc, argv);

  const auto arch_doc = load_doc<spec::ArchitectureDoc>(arch_file, "arch");
  const auto workload_doc = load_doc<spec::WorkloadDoc>(workload_file, "workload");
  const auto arch = arch_doc.select(scale);
  const auto workload = workload_doc.select(scale);
  if (!arch) fail(ErrorKind::kInvalidArgument, "--scale {}: {} has no such preset", scale, arch_file);
  if (!workload) fail(ErrorKind::kInvalidArgument, "--scale {}: {} has no such preset", scale, workload_file);
  const auto kind = device_kind_parse(backend_name);
  if (!kind) fail(ErrorKind::kInvalidArgument, "--backend {}: not cpu or cuda", backend_name);

  kernels::register_builtin_ops();
  const auto backend = kernels::backend_create(*kind, 0);
  runner::ModelStageConfig mc;
  mc.arch = *arch;
  mc.workload = *workload;
  mc.seed = seed;
  mc.backend = backend.get();
  const auto instances = runner::model_stage_instances(mc);

  // Device-to-device copy bandwidth (bytes read + written per second) of a copy_mib
  // buffer, event-timed; the %copy column's reference.
  const double copy_bw = 2.0 * static_cast<double>(copy_mib << 20) /
                         copy_time(*backend, copy_mib << 20, warmup, iterations, false, nullptr);
  std::unique_ptr<kernels::DeviceTracer> tracer;
  if (device_span) {
    tracer = backend->tracer();
    if (!tracer) fail(ErrorKind::kUnsupported, "--device-span: the {} backend has no device tracer", backend->name());
  }
  // The %size column: the op's time against a copy that reads and writes as many bytes
  // as the op moves (bytes / 2 each way), flushed and timed the same way as the op rows
  // (busy time or window). It separates what the op leaves on the table from what a transfer
  // of that size costs anyway (launch, ramp-up and the last wave). Rows moving under
  // 1 MB have none. One copy timing per size.
  std::map<int64_t, double> copy_at_size;
  const auto same_size_copy = [&](double op_bytes) -> double {
    const auto half = static_cast<int64_t>(op_bytes / 2);
    if (op_bytes < 1e6 || half <= 0) return 0;
    auto it = copy_at_size.find(half);
    if (it == copy_at_size.end())
      it = copy_at_size.emplace(half, copy_time(*backend, half, warmup, iterations, true, tracer.get())).first;
    return it->second;
  };
  fmt::print("device: {}\n", backend->facts().describe());
  fmt::print("model: {} ({}), workload {} ({}): batch {}, seq_len {}, {}\n", arch->name, scale, workload->name, scale,
             workload->batch, workload->seq_len, dtype_name(workload->dtype_for(*arch)));
  fmt::print("copy bandwidth ({} MiB, read + write): {:.0f} GB/s\n\n", copy_mib, copy_bw / 1e9);
  fmt::print("{:<20} {:<22} {:<44} {:>11} {:>10} {:>9} {:>7} {:>7} {:>8}{}\n", "op", "role", "shape",
             tracer ? "busy us" : "median us", "MB", "GB/s", "%copy", "%size", "TFLOP/s",
             tracer ? fmt::format(" {:>10} {:>10} {:>5}", "span us", "window us", "acts") : "");
  std::vector<std::string> work_lines;
  std::ofstream json;
  if (!json_file.empty()) {
    json.open(json_file);
    if (!json) fail(ErrorKind::kIo, "--json {}: cannot write", json_file);
  }
  int failures = 0;
  for (const auto& inst : instances) {
    if (!inst.measured) continue;
    if (!only_ops.empty() && std::find(only_ops.begin(), only_ops.end(), inst.op) == only_ops.end()) continue;
    const std::string shape = runner::kernel_shape_string(inst.shape);
    try {
      runner::KernelTimingOptions o;
      o.seed = seed;
      o.warmup = warmup;
      o.iterations = iterations;
      o.tracer = tracer.get();
      const runner::KernelTiming timing = runner::kernel_instance_time(*backend, nullptr, inst, o);
      const auto& m = timing.measure;
      const double window = m.subjects[0].summary.median, span = m.subjects[0].span_summary.median;
      const double busy = m.subjects[0].busy_summary.median;
      const double t = tracer ? busy : window, bytes = timing.bytes, flops = timing.flops;
      const stats::Summary& figures = tracer ? m.subjects[0].busy_summary : m.subjects[0].summary;
      const auto& acts = m.subjects[0].device_activities;
      const int64_t most_acts = acts.empty() ? 0 : *std::max_element(acts.begin(), acts.end());
      if (t <= 0) fail(ErrorKind::kRuntime, "{} {}: no device time measured", inst.op, inst.role);
      const double copy_same = same_size_copy(bytes);
      fmt::print("{:<20} {:<22} {:<44} {:>11.2f} {:>10.2f} {:>9.0f} {:>6.1f}% {:>7} {:>8.1f}{}\n", inst.op, inst.role,
                 shape, t * 1e6, bytes / 1e6, bytes / t / 1e9, 100 * bytes / t / copy_bw,
                 copy_same > 0 ? fmt::format("{:.1f}%", 100 * copy_same / t) : "", flops / t / 1e12,
                 tracer ? fmt::format(" {:>10.2f} {:>10.2f} {:>5}", span * 1e6, window * 1e6, most_acts) : "");
      // fused_moe against cuBLASLt doing the same FLOPs as two dense GEMMs over all the
      // (token, slot) pairs: [pairs, H] x [H, 2 I] and [pairs, I] x [I, H] (the linear
      // baseline, timed the same way). The ratio is prefill's yardstick; at decode sizes
      // the op is bound by the chosen experts' weights (its %copy column).
      double dense = 0;
      if (inst.op == "fused_moe" && *kind == DeviceKind::kCuda) {
        const int64_t pairs = inst.shape.dim("tokens") * inst.shape.dim("k"), h = inst.shape.dim("hidden"),
                      inter = inst.shape.dim("inter");
        std::string parts;
        for (const auto& [in, out_features] : {std::pair{h, 2 * inter}, std::pair{inter, h}}) {
          runner::InstanceRecord ref;
          ref.op = "linear";
          ref.role = "moe.dense_reference";
          ref.shape = kernels::OpShape{{{"tokens", pairs}, {"in", in}, {"out", out_features}, {"bias", 0}}, {}};
          ref.dtype = inst.dtype;
          ref.measured = true;
          const auto rt = runner::kernel_instance_time(*backend, nullptr, ref, o);
          const double rt_s =
              tracer ? rt.measure.subjects[0].busy_summary.median : rt.measure.subjects[0].summary.median;
          dense += rt_s;
          parts += fmt::format("{}[{}, {}] x [{}, {}] {:.2f} us", parts.empty() ? "" : " + ", pairs, in, in,
                               out_features, rt_s * 1e6);
        }
        fmt::print(
            "{:<20} {:<22} cuBLASLt, the same FLOPs dense: {} = {:.2f} us, {:.1f} TFLOP/s; fused_moe at {:.1f}%\n", "",
            "", parts, dense * 1e6, flops / dense / 1e12, 100 * dense / t);
      }
      if (tracer) {
        std::string names;
        for (const auto& n : m.subjects[0].device_names) names += (names.empty() ? "" : "; ") + n;
        work_lines.push_back(fmt::format("  {} {}: {}", inst.op, inst.role, names));
      }
      if (json.is_open()) {
        nlohmann::json row = {{"op", inst.op},           {"role", inst.role},   {"dtype", dtype_name(inst.dtype)},
                              {"params", inst.shape.params}, {"median_s", t},   {"p10_s", figures.p10},
                              {"p90_s", figures.p90}, {"bytes", bytes}, {"flops", flops},
                              {"impl", timing.impl->name},       {"copy_bw", copy_bw}, {"sets", m.sets}};
        if (copy_same > 0) row["copy_same_size_s"] = copy_same;
        if (dense > 0) row["dense_reference_s"] = dense;
        if (tracer) {
          row["window_s"] = window;
          row["device_span_s"] = span;
          row["device_busy_s"] = busy;
          row["activities"] = most_acts;
          row["device_work"] = m.subjects[0].device_names;
        }
        for (const auto& [k, v] : inst.shape.dims) row["dims"][k] = v;
        json << row.dump() << "\n";
      }
    } catch (const Error& e) {
      ++failures;
      fmt::print("{:<20} {:<22} {:<44} failed: {}\n", inst.op, inst.role, shape, e.what());
    }
    std::fflush(stdout);
  }
  if (!work_lines.empty()) {
    fmt::print("\ndevice work of one call (the first {} activities):\n", kernels::DeviceWork::kDeviceWorkNames);
    for (const auto& line : work_lines) fmt::print("{}\n", line);
  }
  if (*kind == DeviceKind::kCuda) {
    const auto plans = cuda::attention_cudnn_plans();
    if (!plans.empty()) fmt::print("\ncuDNN attention problems:\n");
    for (const auto& line : plans) fmt::print("  {}\n", line);
    const auto gemms = cuda::LinearLt::instance().plans();
    if (!gemms.empty()) fmt::print("\ncuBLASLt problems:\n");
    for (const auto& line : gemms) fmt::print("  {}\n", line);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const fk::Error& e) {
    std::cerr << "fk-bench-ops: " << e.what() << "\n";
    return 2;
  }
}
