#include "runner/kernel_stage.h"

#include "core/error.h"
#include "kernels/compare.h"
#include "kernels/measure.h"
#include "runner/heartbeat.h"
#include "runner/test_seams.h"

#include <chrono>
#include <fmt/format.h>

namespace fk::runner {
namespace {

using kernels::ArgRole;
using kernels::OpCall;

// Device copies of the kInOut arguments of `call` (what each timed call starts from).
std::vector<Tensor> snapshot_inouts(kernels::Backend& backend, const kernels::OpDef& def, const OpCall& call) {
  std::vector<Tensor> saved(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i)
    if (def.args[i].role == ArgRole::kInOut && call.args[i].defined()) {
      saved[i] = backend.empty(call.args[i].dtype(), call.args[i].shape());
      backend.copy(saved[i], call.args[i]);
    }
  return saved;
}

}  // namespace

std::string kernel_instance_stream(const InstanceRecord& inst) {
  return fmt::format("kernel.{}.{}.{}.{}", inst.op, inst.role, kernel_shape_string(inst.shape),
                     kernel_params_string(inst.shape));
}

const kernels::OpImpl& kernel_instance_baseline(kernels::Backend& backend, const OpCall& call,
                                                const InstanceRecord& inst) {
  const kernels::OpImpl* impl = backend.baseline(inst.op);
  if (impl == nullptr)
    fail(ErrorKind::kUnsupported, "kernel stage: op {} has no {} baseline", inst.op, backend.name());
  if (impl->supports && !impl->supports(call))
    fail(ErrorKind::kUnsupported, "kernel stage: the {} baseline of {} does not support {} {} ({})", backend.name(),
         inst.op, inst.role, kernel_shape_string(inst.shape), dtype_name(inst.dtype));
  return *impl;
}

KernelTiming kernel_instance_time(kernels::Backend& backend, const kernels::OpImpl* impl, const InstanceRecord& inst,
                                  const KernelTimingOptions& o) {
  const kernels::OpDef& def = kernels::OpRegistry::global().def(inst.op);
  const std::string stream = kernel_instance_stream(inst);
  backend.activate();
  // Input sets rotated on the device: enough that no call reads what the last left in cache.
  const OpCall probe = def.make(inst.shape, inst.dtype, RngStream(o.seed, stream + ".timing0"));
  const kernels::RotationPlan plan = kernels::rotation_plan(backend, def.bytes(probe), o.max_rotation_bytes);
  std::vector<OpCall> calls;
  std::vector<std::vector<Tensor>> pristine;
  for (int64_t s = 0; s < plan.sets; ++s) {
    const OpCall host = s == 0 ? probe : def.make(inst.shape, inst.dtype, RngStream(o.seed, fmt::format("{}.timing{}", stream, s)));
    calls.push_back(backend.to_device(host));
    pristine.push_back(snapshot_inouts(backend, def, calls.back()));
  }
  KernelTiming out;
  out.impl = impl != nullptr ? impl : &kernel_instance_baseline(backend, calls.front(), inst);
  out.bytes = def.bytes(probe);
  out.flops = def.flops(probe);
  kernels::Subject subject;
  subject.name = out.impl->name;
  subject.prepare = [&](int64_t s) {
    const auto& saved = pristine[static_cast<size_t>(s)];
    for (size_t i = 0; i < saved.size(); ++i)
      if (saved[i].defined()) backend.copy(calls[static_cast<size_t>(s)].args[i], saved[i]);
  };
  subject.run = [&](int64_t s) {
    const auto t0 = std::chrono::steady_clock::now();
    out.impl->run(calls[static_cast<size_t>(s)]);
    seam_stretch(t0);  // test seam (test_seams.h)
  };
  subject.check = [&](int64_t) {
    if (o.tick) o.tick();
  };
  kernels::MeasureOptions mo;
  mo.warmup = o.warmup;
  mo.iterations = o.iterations;
  mo.tracer = o.tracer;
  out.measure = kernels::measure(backend, std::span(&subject, 1), plan, mo);
  if (!out.measure.audit.empty())
    fail(ErrorKind::kRuntime, "kernel stage: {} {}: {}", inst.op, inst.role, out.measure.audit);
  return out;
}

std::string kernel_shape_string(const kernels::OpShape& shape) {
  std::string s;
  for (const auto& [k, v] : shape.dims) s += fmt::format("{}{}={}", s.empty() ? "" : ",", k, v);
  return s;
}

std::string kernel_params_string(const kernels::OpShape& shape) {
  std::string s;
  for (double p : shape.params) s += fmt::format("{}{:g}", s.empty() ? "" : ",", p);
  return s;
}

KernelStageOutput kernel_stage_run(const KernelStageConfig& c, kernels::Backend& backend) {
  KernelStageOutput out;
  backend.activate();
  out.before = backend.state();
  int64_t done = 0;
  for (const InstanceRecord& inst : c.instances) {
    const auto t_begin = std::chrono::steady_clock::now();
    const kernels::OpDef& def = kernels::OpRegistry::global().def(inst.op);
    KernelInstanceResult r;
    r.op = inst.op;
    r.role = inst.role;
    r.shape = kernel_shape_string(inst.shape);
    r.params = kernel_params_string(inst.shape);
    r.dtype = inst.dtype;
    r.calls_per_step = inst.calls;
    r.layers = inst.layers;
    r.rank = c.rank;
    const kernels::Tolerance tol = def.tolerance_for(inst.dtype);
    r.atol = tol.atol;
    r.rtol = tol.rtol;
    const std::string stream = kernel_instance_stream(inst);

    // Precision: fresh inputs per round against the fp64 reference.
    kernels::Comparison worst;
    const kernels::OpImpl* impl = nullptr;
    for (int64_t round = 0; round < c.spec.rounds; ++round) {
      OpCall host = def.make(inst.shape, inst.dtype, RngStream(c.seed, fmt::format("{}.round{}", stream, round)));
      if (round == 0) {
        r.flops = def.flops(host);
        r.bytes = def.bytes(host);
      }
      const auto ref = kernels::run_reference(def, host);
      progress_tick();  // a full-size reference takes seconds
      OpCall dev = backend.to_device(host);
      impl = &kernel_instance_baseline(backend, dev, inst);
      backend.activate();
      impl->run(dev);
      for (const auto& [index, expected] : ref) host.args[index] = backend.to_host(dev.args[index]);
      seam_perturb_outputs(def, host);  // test seam (test_seams.h)
      for (const auto& [index, expected] : ref) {
        const auto cmp = kernels::compare(host.args[index], expected, tol);
        worst = round == 0 && index == ref.begin()->first ? cmp : kernels::combine(worst, cmp);
      }
    }
    r.rel_l2 = worst.rel_l2;
    r.max_abs = worst.max_abs;
    r.matched_fraction = worst.matched_fraction;
    r.nan = worst.nan;
    r.inf = worst.inf;
    r.passed = worst.passed;
    r.rounds = c.spec.rounds;

    // Timing over rotated input sets on the device.
    KernelTimingOptions to;
    to.seed = c.seed;
    to.warmup = c.spec.warmup;
    to.iterations = c.spec.iterations;
    to.max_rotation_bytes = c.max_rotation_bytes;
    to.tick = [] { progress_tick(); };
    const auto t_timing = std::chrono::steady_clock::now();
    const KernelTiming timing = kernel_instance_time(backend, impl, inst, to);
    const kernels::MeasureResult& m = timing.measure;
    r.impl = timing.impl->name;
    if (c.rank == 0)
      progress_note(fmt::format("kernel stage: {}/{} {} {} {}: precision {:.1f} s, timing {:.1f} s", ++done,
                                c.instances.size(), inst.op, inst.role, r.shape,
                                std::chrono::duration<double>(t_timing - t_begin).count(),
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t_timing).count()));
    r.buffer_sets = m.sets;
    r.seconds = m.subjects[0].seconds;
    r.throttled = m.subjects[0].throttled_count;
    out.instances.push_back(std::move(r));
  }
  out.after = backend.state();
  return out;
}

}  // namespace fk::runner
