#include "runner/candidate_check.h"

#include "core/error.h"
#include "core/subprocess.h"
#include "kernels/candidate/candidate_impl.h"
#include "runner/heartbeat.h"
#include "runner/kernel_stage.h"

#include <filesystem>
#include <fmt/format.h>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace fk::runner {
namespace {

using nlohmann::json;

json instance_json(const InstanceRecord& i) {
  return {{"op", i.op},         {"role", i.role},     {"dims", i.shape.dims}, {"params", i.shape.params},
          {"dtype", std::string(dtype_name(i.dtype))}, {"calls", i.calls}, {"layers", i.layers}};
}

InstanceRecord instance_from_json(const json& j) {
  InstanceRecord i;
  i.op = j.at("op");
  i.role = j.at("role");
  i.shape.dims = j.at("dims").get<std::map<std::string, int64_t>>();
  i.shape.params = j.at("params").get<std::vector<double>>();
  i.dtype = dtype_parse(j.at("dtype").get<std::string>()).value_or(DType::kF32);
  i.calls = j.at("calls");
  i.layers = j.at("layers").get<std::vector<int64_t>>();
  return i;
}

std::string describe_instance(const InstanceRecord& i) {
  return fmt::format("{} {} [{}] {}", i.op, i.role, kernel_shape_string(i.shape), dtype_name(i.dtype));
}

}  // namespace

json to_json(const CandidateInstanceResult& r) {
  return {{"instance", instance_json(r.instance)},
          {"verdict", std::string(kernels::verdict_name(r.verdict.verdict))},
          {"reason", r.verdict.reason},
          {"rel_l2", r.rel_l2},
          {"max_abs", r.max_abs},
          {"matched_fraction", r.matched_fraction},
          {"baseline_rel_l2", r.baseline_rel_l2},
          {"nan", r.nan},
          {"inf", r.inf},
          {"candidate_median_s", r.candidate_median_s},
          {"baseline_median_s", r.baseline_median_s},
          {"speedup", r.speedup},
          {"reuse_ratio", r.reuse_ratio},
          {"candidate_s", r.candidate_s},
          {"baseline_s", r.baseline_s}};
}

CandidateInstanceResult candidate_result_from_json(const json& j) {
  CandidateInstanceResult r;
  r.instance = instance_from_json(j.at("instance"));
  r.verdict.verdict = kernels::verdict_parse(j.at("verdict").get<std::string>()).value_or(kernels::Verdict::kRuntimeError);
  r.verdict.reason = j.at("reason");
  r.rel_l2 = j.at("rel_l2");
  r.max_abs = j.at("max_abs");
  r.matched_fraction = j.at("matched_fraction");
  r.baseline_rel_l2 = j.at("baseline_rel_l2");
  r.nan = j.at("nan");
  r.inf = j.at("inf");
  r.candidate_median_s = j.at("candidate_median_s");
  r.baseline_median_s = j.at("baseline_median_s");
  r.speedup = j.at("speedup");
  r.reuse_ratio = j.at("reuse_ratio");
  r.candidate_s = j.at("candidate_s").get<std::vector<double>>();
  r.baseline_s = j.at("baseline_s").get<std::vector<double>>();
  return r;
}

std::string candidate_worker_path() {
  char buf[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  const std::filesystem::path self = n > 0 ? std::filesystem::path(std::string(buf, static_cast<size_t>(n)))
                                           : std::filesystem::path("fk-runner");
  for (const auto& p : {self.parent_path() / "fk-candidate-worker",
                        self.parent_path().parent_path() / "runner" / "fk-candidate-worker"})
    if (std::filesystem::exists(p)) return p.string();
  return "fk-candidate-worker";
}

std::vector<CandidateInstanceResult> candidate_check(const kernels::CandidateManifest& manifest,
                                                     const std::string& library,
                                                     const std::vector<InstanceRecord>& instances,
                                                     const CandidateCheckOptions& o) {
  std::vector<CandidateInstanceResult> results(instances.size());
  for (size_t i = 0; i < instances.size(); ++i) results[i].instance = instances[i];
  std::vector<bool> done(instances.size(), false);
  size_t next = 0;
  int restarts = 0;
  while (next < instances.size()) {
    json request = {{"library", library},
                    {"manifest", manifest.folder},
                    {"threads", o.threads},
                    {"gate",
                     {{"rounds", o.gate.rounds},
                      {"warmup", o.gate.warmup},
                      {"iterations", o.gate.iterations},
                      {"seed", o.gate.seed},
                      {"flush_bytes", o.gate.flush_bytes},
                      {"after_return_wait_s", o.gate.after_return_wait_s},
                      {"accuracy_bound", o.gate.accuracy_bound},
                      {"timing", o.gate.timing}}},
                    {"first", next},
                    {"instances", json::array()}};
    for (const auto& i : instances) request["instances"].push_back(instance_json(i));
    long current = -1;
    SubprocessOptions so;
    so.input = request.dump();
    so.idle_timeout_s = o.instance_time_limit_s;
    so.merge_stderr = false;
    so.on_line = [&](const std::string& line) {
      progress_tick();
      if (line.rfind("BEGIN ", 0) == 0) {
        current = std::stol(line.substr(6));
        return;
      }
      if (line.empty() || line[0] != '{') return;
      try {
        const json j = json::parse(line);
        const auto idx = j.at("index").get<size_t>();
        if (idx < results.size()) {
          results[idx] = candidate_result_from_json(j.at("result"));
          done[idx] = true;
        }
      } catch (const std::exception&) {
        // A line the candidate itself printed: not ours.
      }
    };
    const SubprocessResult run = subprocess_run({o.worker}, so);
    size_t resume = instances.size();
    if (!run.ok()) {
      const size_t at = current >= 0 ? static_cast<size_t>(current) : next;
      if (!run.started) fail(ErrorKind::kRuntime, "cannot start {}: {}", o.worker, run.error);
      if (at < instances.size() && !done[at]) {
        kernels::VerdictReason v;
        const std::string where = describe_instance(instances[at]);
        if (run.timed_out) {
          v = {kernels::Verdict::kTimeout,
               fmt::format("exceeded the time limit of {:.0f} s on {}", o.instance_time_limit_s, where)};
        } else if (run.signal != 0) {
          v = {kernels::Verdict::kCrashed, fmt::format("killed by {} on {}", signal_name(run.signal), where)};
        } else {
          const std::string tail = run.error_output.substr(run.error_output.size() > 400 ? run.error_output.size() - 400 : 0);
          v = {kernels::Verdict::kCrashed, fmt::format("the checking process ended ({}) on {}: {}", run.describe(),
                                                       where, tail)};
        }
        results[at].verdict = v;
        done[at] = true;
      }
      resume = at + 1;
    }
    // Continue after the instance that failed (a new worker each time), a few times at most.
    next = resume;
    while (next < instances.size() && done[next]) ++next;
    if (next < instances.size() && ++restarts > 3) {
      for (size_t i = next; i < instances.size(); ++i)
        if (!done[i]) results[i].verdict = {kernels::Verdict::kCrashed, "not run: the candidate failed too often"};
      break;
    }
  }
  return results;
}

int candidate_worker_main(const std::string& request_text) {
  // The protocol gets a private copy of stdout; whatever the candidate prints goes to
  // stderr, so it cannot forge result lines.
  const int proto_fd = dup(1);
  dup2(2, 1);
  FILE* proto = fdopen(proto_fd, "w");
  auto emit = [proto](const std::string& line) {
    std::fputs(line.c_str(), proto);
    std::fputc('\n', proto);
    std::fflush(proto);
  };
  const json req = json::parse(request_text);
  spec::Diagnostics diags;
  auto manifest = kernels::candidate_manifest_load(req.at("manifest").get<std::string>(), diags);
  if (!manifest) {
    std::cerr << diags.to_string();
    return 2;
  }
  auto loaded = kernels::candidate_load(*manifest, req.at("library").get<std::string>());
  const int threads = req.at("threads");
  const kernels::OpImpl impl = kernels::candidate_op_impl(loaded, threads);
  kernels::GateOptions g;
  const json& gj = req.at("gate");
  g.rounds = gj.at("rounds");
  g.warmup = gj.at("warmup");
  g.iterations = gj.at("iterations");
  g.seed = gj.at("seed");
  g.flush_bytes = gj.at("flush_bytes");
  g.after_return_wait_s = gj.at("after_return_wait_s");
  g.accuracy_bound = gj.at("accuracy_bound");
  g.timing = gj.at("timing");
  const auto first = req.at("first").get<size_t>();
  const json& list = req.at("instances");
  for (size_t i = first; i < list.size(); ++i) {
    const InstanceRecord inst = instance_from_json(list.at(i));
    emit(fmt::format("BEGIN {}", i));
    const kernels::OpDef& def = kernels::OpRegistry::global().def(inst.op);
    const kernels::OpImpl& base = kernels::OpRegistry::global().impl(inst.op, "cpu");
    CandidateInstanceResult r;
    r.instance = inst;
    if (!impl.supports(def.make(inst.shape, inst.dtype, RngStream(0, "probe")))) {
      r.verdict = {kernels::Verdict::kUnsupported,
                   fmt::format("kernel.yaml does not list dtype {}", dtype_name(inst.dtype))};
    } else {
      const kernels::InstanceGate gate = kernels::gate_instance(
          def, impl, base, inst.shape, inst.dtype, g,
          fmt::format("candidate.{}.{}.{}.{}", inst.op, inst.role, kernel_shape_string(inst.shape),
                      kernel_params_string(inst.shape)));
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
    }
    emit(json{{"index", i}, {"result", to_json(r)}}.dump());
  }
  emit("DONE");
  std::_Exit(0);  // do not run a candidate's static destructors or wait for its threads
}

}  // namespace fk::runner
