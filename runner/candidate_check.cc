#include "runner/candidate_check.h"

#include "core/error.h"
#include "kernels/candidate/worker.h"
#include "kernels/fk_kernel.h"
#include "runner/heartbeat.h"
#include "runner/kernel_stage.h"

#include <fmt/format.h>
#include <memory>

namespace fk::runner {
namespace {

using kernels::Verdict;
using kernels::VerdictReason;
using kernels::Worker;
using kernels::WorkerConfig;

std::string describe_instance(const InstanceRecord& i) {
  return fmt::format("{} {} [{}] {}", i.op, i.role, kernel_shape_string(i.shape), dtype_name(i.dtype));
}

void copy_gate(const kernels::InstanceGate& gate, CandidateInstanceResult& r) {
  r.verdict = gate.verdict;
  r.rel_l2 = gate.rel_l2;
  r.max_abs = gate.max_abs;
  r.matched_fraction = gate.matched_fraction;
  r.baseline_rel_l2 = gate.baseline_rel_l2;
  r.nan = gate.nan;
  r.inf = gate.inf;
  r.candidate_median_s = gate.candidate_median_s;
  r.baseline_median_s = gate.baseline_median_s;
  r.speedup = gate.speedup;
  r.reuse_ratio = gate.reuse_ratio;
  r.candidate_s = gate.candidate_s;
  r.baseline_s = gate.baseline_s;
  r.candidate_span_s = gate.candidate_span_s;
  r.candidate_wall_s = gate.candidate_wall_s;
  r.baseline_wall_s = gate.baseline_wall_s;
  r.door_s = gate.door_s;
  r.clock_excess_s = gate.clock_excess_s;
  r.clock_allowance_s = gate.clock_allowance_s;
  r.clock_charged_s = gate.clock_charged_s;
}

}  // namespace

CandidateCheck candidate_check(const kernels::CandidateManifest& manifest, const std::string& library,
                               const std::vector<InstanceRecord>& instances, const CandidateCheckOptions& o) {
  CandidateCheck out;
  out.results.resize(instances.size());
  for (size_t i = 0; i < instances.size(); ++i) out.results[i].instance = instances[i];
  WorkerConfig cc;
  cc.executable = o.worker;
  cc.library = library;
  cc.name = manifest.name;
  cc.op = manifest.op;
  cc.entry = manifest.entry;
  cc.threads = o.threads;
  cc.time_limit_s = o.instance_time_limit_s;
  cc.on_wait = [] { progress_tick(); };
  cc.device = o.device;
  WorkerConfig bc = cc;
  bc.library.clear();
  bc.name = "baseline";
  if (!o.sanitizer.empty()) {  // the candidate's worker only: the baseline is our code
    cc.sanitizer = o.sanitizer;
    cc.sanitizer_tool = o.sanitizer_tool;
    cc.time_limit_s = 10 * o.instance_time_limit_s;
  }
  std::unique_ptr<Worker> base, cand;
  std::vector<bool> grown_for(instances.size(), false);  // instances that asked for larger arenas
  int ends = 0;
  std::string load_error;  // a load that answered with an error holds for every instance
  for (size_t i = 0; i < instances.size(); ++i) {
    CandidateInstanceResult& r = out.results[i];
    const InstanceRecord& inst = instances[i];
    const std::string where = describe_instance(inst);
    progress_tick();
    if (!manifest.handles(inst.dtype)) {
      r.verdict = {Verdict::kUnsupported, fmt::format("kernel.yaml does not list dtype {}", dtype_name(inst.dtype))};
      continue;
    }
    if (!load_error.empty()) {
      r.verdict = {Verdict::kRuntimeError, load_error};
      continue;
    }
    if (ends >= 3) {
      r.verdict = {Verdict::kCrashed, "not run: the candidate's worker ended three times"};
      continue;
    }
    bool fresh = false;  // a new candidate worker: load the library in it
    try {
      if (!base || !base->alive()) {
        base = std::make_unique<Worker>(bc);
        const auto b = base->load();
        if (!b || b->code != FK_OK) fail(ErrorKind::kRuntime, "the baseline worker failed to start: {}", base->failure());
      }
      if (!cand || !cand->alive()) {
        cand = std::make_unique<Worker>(cc);
        fresh = true;
      }
    } catch (const Error& e) {
      if (!grown_for[i]) throw;
      // Arenas as large as this instance asked for could not be made: it is not checked.
      r.verdict = {Verdict::kRuntimeError, fmt::format("cannot start workers with arenas of {:.2f} GiB for this "
                                                       "instance: {}",
                                                       static_cast<double>(cc.device_arena_bytes) / double(1u << 30),
                                                       e.what())};
      cc.device_arena_bytes = bc.device_arena_bytes = 0;
      base.reset();
      cand.reset();
      continue;
    }
    if (fresh) {
      out.sandbox = cand->sandbox();
      const auto l = cand->load();
      if (!l) {
        const kernels::RemoteFailure f = kernels::worker_failure_verdict(*cand, where);
        r.verdict = {kernels::verdict_parse(f.verdict).value_or(Verdict::kCrashed), f.reason};
        ++ends;
        continue;
      }
      if (l->code != FK_OK) {
        load_error = fmt::format("cannot load the candidate: {}", l->message);
        r.verdict = {Verdict::kRuntimeError, load_error};
        continue;
      }
    }
    kernels::GateOptions g = o.gate;
    g.threads = o.threads;
    if (!o.timed.empty() && i < o.timed.size() && !o.timed[i]) g.timing = false;
    if (cand->sanitized()) {
      g.timing = false;
      g.idle_cpu_check = false;
    }
    const kernels::OpDef& def = kernels::OpRegistry::global().def(inst.op);
    const kernels::InstanceGate gate = kernels::gate_instance(
        def, *cand, *base, inst.shape, inst.dtype, g,
        fmt::format("candidate.{}.{}.{}.{}", inst.op, inst.role, kernel_shape_string(inst.shape),
                    kernel_params_string(inst.shape)));
    if (gate.arena_bytes_needed > 0 && o.device != nullptr && !grown_for[i]) {
      // Device arenas are sized once per worker: new workers with room for this
      // instance (a quarter more), and the instance again. A second miss stands.
      const size_t bytes = gate.arena_bytes_needed + gate.arena_bytes_needed / 4;
      cc.device_arena_bytes = bc.device_arena_bytes = std::max(bytes, cc.device_arena_bytes);
      cand.reset();
      base.reset();
      grown_for[i] = true;
      --i;
      continue;
    }
    copy_gate(gate, r);
    bool tool_stopped = false;  // the sanitizer stopped a bad access: the worker's end is its doing
    if (cand->sanitized()) {
      const VerdictReason found = kernels::sanitizer_verdict(cand->config().sanitizer_tool, cand->sanitizer_findings());
      if (found.verdict != Verdict::kPassed) {
        // memcheck stops a kernel at its first bad access, and the worker then sees a
        // device fault: the finding, which says what the access was, is the verdict. A
        // worse verdict of another cause keeps its place and gains the finding.
        tool_stopped = gate.candidate_ended && cand->end() == kernels::WorkerEnd::kDeviceFault;
        if (tool_stopped || kernels::verdict_severity(found.verdict) > kernels::verdict_severity(r.verdict.verdict))
          r.verdict = {found.verdict, found.reason + (tool_stopped ? "; the tool then stopped the kernel" : "")};
        else
          r.verdict.reason += "; " + found.reason;
      }
    }
    if (gate.candidate_ended) {
      r.verdict.reason += fmt::format(" [{}]", where);
      if (!tool_stopped) ++ends;  // an access the tool stopped costs a new worker, not one of the three ends
      cand.reset();
    }
    if (gate.baseline_ended) base.reset();
  }
  return out;
}

}  // namespace fk::runner
