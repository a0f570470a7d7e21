#include "runner/kernel_stage.h"

#include "core/error.h"
#include "kernels/compare.h"
#include "runner/heartbeat.h"
#include "runner/test_seams.h"

#include <chrono>
#include <cstring>
#include <fmt/format.h>

namespace fk::runner {
namespace {

using kernels::ArgRole;
using kernels::OpCall;

volatile unsigned char g_flush_sink = 0;

std::vector<Tensor> snapshot_inouts(const kernels::OpDef& def, const OpCall& call) {
  std::vector<Tensor> saved(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i)
    if (def.args[i].role == ArgRole::kInOut && call.args[i].defined()) saved[i] = call.args[i].contiguous_copy();
  return saved;
}

void restore(const OpCall& call, const std::vector<Tensor>& saved) {
  for (size_t i = 0; i < saved.size(); ++i)
    if (saved[i].defined()) std::memcpy(call.args[i].data(), saved[i].data(), saved[i].nbytes());
}

}  // namespace

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

std::vector<KernelInstanceResult> kernel_stage_run(const KernelStageConfig& c, const ImplSet& impls) {
  std::vector<KernelInstanceResult> results;
  std::vector<unsigned char> flush(c.flush_bytes, 1);
  for (const InstanceRecord& inst : c.instances) {
    const kernels::OpDef& def = kernels::OpRegistry::global().def(inst.op);
    const kernels::OpImpl& impl = impls.get(inst.op);
    KernelInstanceResult r;
    r.op = inst.op;
    r.role = inst.role;
    r.impl = impl.name;
    r.shape = kernel_shape_string(inst.shape);
    r.params = kernel_params_string(inst.shape);
    r.dtype = inst.dtype;
    r.calls_per_step = inst.calls;
    r.layers = inst.layers;
    r.rank = c.rank;
    const kernels::Tolerance tol = def.tolerance_for(inst.dtype);
    r.atol = tol.atol;
    r.rtol = tol.rtol;
    const std::string stream = fmt::format("kernel.{}.{}.{}.{}", inst.op, inst.role, r.shape, r.params);

    // Precision: fresh inputs per round against the fp64 reference.
    kernels::Comparison worst;
    for (int64_t round = 0; round < c.spec.rounds; ++round) {
      OpCall call = def.make(inst.shape, inst.dtype, RngStream(c.seed, fmt::format("{}.round{}", stream, round)));
      if (round == 0) {
        r.flops = def.flops(call);
        r.bytes = def.bytes(call);
      }
      const auto ref = kernels::run_reference(def, call);
      impl.run(call);
      seam_perturb_outputs(def, call);  // test seam (test_seams.h)
      for (const auto& [index, expected] : ref) {
        const auto cmp = kernels::compare(call.args[index], expected, tol);
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

    // Timing over rotated input sets.
    const double set_bytes = std::max(1.0, r.bytes);
    const auto sets = static_cast<int64_t>(std::clamp(
        std::min(static_cast<double>(c.flush_bytes) * 2.0 / set_bytes, static_cast<double>(c.max_rotation_bytes) / set_bytes),
        1.0, 16.0));
    r.buffer_sets = sets;
    const bool small = set_bytes * static_cast<double>(sets) < static_cast<double>(c.flush_bytes);
    std::vector<OpCall> calls;
    std::vector<std::vector<Tensor>> pristine;
    for (int64_t s = 0; s < sets; ++s) {
      calls.push_back(def.make(inst.shape, inst.dtype, RngStream(c.seed, fmt::format("{}.timing{}", stream, s))));
      pristine.push_back(snapshot_inouts(def, calls.back()));
    }
    unsigned char sink = 0;
    const int64_t total = c.spec.warmup + c.spec.iterations;
    for (int64_t i = 0; i < total; ++i) {
      const size_t s = static_cast<size_t>(i % sets);
      restore(calls[s], pristine[s]);
      if (small) {
        for (size_t b = 0; b < flush.size(); b += 64) flush[b] = static_cast<unsigned char>(flush[b] + 1);
        sink ^= flush[static_cast<size_t>(i) % flush.size()];
      }
      const auto t0 = std::chrono::steady_clock::now();
      impl.run(calls[s]);
      seam_stretch(t0);  // test seam (test_seams.h)
      progress_tick();
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (i >= c.spec.warmup) r.seconds.push_back(dt);
    }
    g_flush_sink = sink;  // keeps the flush writes from being optimised away
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace fk::runner
