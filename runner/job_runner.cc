#include "runner/job_runner.h"

#include "collectives/grid.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/spec/family.h"
#include "core/spec/memory.h"
#include "kernels/backends.h"
#include "kernels/blas_info.h"
#include "results/job_result.h"
#include "runner/candidate_stage.h"
#include "runner/kernel_stage.h"
#include "runner/model/family.h"
#include "runner/model/model_comms.h"
#include "runner/model_stage.h"

#include <chrono>
#include <csignal>
#include <thread>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

namespace fk::runner {
namespace {

using nlohmann::json;

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

template <typename T>
json to_array(const std::vector<T>& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(results::to_json(x));
  return a;
}

template <typename T>
void from_array(const json& a, std::vector<T>& out) {
  for (const auto& x : a) {
    T r;
    results::from_json(x, r);
    out.push_back(std::move(r));
  }
}

// Sends a byte payload to group rank 0 as int32 words (length first).
void send_bytes(collectives::Communicator& g, const std::vector<std::uint8_t>& bytes) {
  const int64_t n = static_cast<int64_t>(bytes.size());
  g.send(&n, 1, DType::kI64, 0, 1);
  std::vector<int32_t> words(static_cast<size_t>((n + 3) / 4), 0);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  g.send(words.data(), words.size(), DType::kI32, 0, 2);
}

std::vector<std::uint8_t> recv_bytes(collectives::Communicator& g, int from) {
  int64_t n = 0;
  g.recv(&n, 1, DType::kI64, from, 1);
  std::vector<int32_t> words(static_cast<size_t>((n + 3) / 4), 0);
  g.recv(words.data(), words.size(), DType::kI32, from, 2);
  std::vector<std::uint8_t> bytes(static_cast<size_t>(n));
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

// Test seam: FK_RUNNER_FAULT=<kind>:<group rank>[:<attempt suffix>] makes that rank
// misbehave as a job starts — kind `job` throws (a job error, exit 3), `crash` raises
// SIGSEGV (exit 4), `hang` stops making progress forever; with an attempt suffix
// ("a1") only attempts whose id ends with it are affected (fail once, then succeed).
void inject_fault(int group_rank, const std::string& attempt) {
  const char* spec = std::getenv("FK_RUNNER_FAULT");
  if (spec == nullptr) return;
  const std::string s(spec);
  const auto c1 = s.find(':');
  if (c1 == std::string::npos) return;
  const std::string kind = s.substr(0, c1);
  const auto c2 = s.find(':', c1 + 1);
  const int rank = std::atoi(s.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1).c_str());
  if (rank != group_rank) return;
  if (c2 != std::string::npos) {
    const std::string suffix = "." + s.substr(c2 + 1);
    if (attempt.size() < suffix.size() || attempt.compare(attempt.size() - suffix.size(), suffix.size(), suffix) != 0)
      return;
  }
  if (kind == "job") fail(ErrorKind::kRuntime, "injected fault (FK_RUNNER_FAULT={})", s);
  if (kind == "crash") std::raise(SIGSEGV);
  if (kind == "hang")
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
}

}  // namespace

std::string job_result_path(const std::string& results_dir, const std::string& job_id) {
  return (std::filesystem::path(results_dir) / (job_id + ".h5")).string();
}

std::string JobSummary::line() const {
  return fmt::format("{:.2f} s; kernels {}/{} passed; last-layer rel err {:.1e}; top-1 {:.0f}%", wall_s,
                     kernels_passed, kernels, final_rel_err, 100.0 * top1);
}

namespace {

JobSummary summarize(const results::JobResult& r) {
  JobSummary s;
  s.wall_s = r.meta.wall_s;
  for (const auto& k : r.kernels) {
    if (k.rank != 0) continue;  // one rank's view of each instance
    ++s.kernels;
    s.kernels_passed += k.passed;
  }
  double err = 0, ref = 0;
  int64_t last = -1;
  for (const auto& e : r.layers)
    if (e.run == "baseline" && e.step == "prefill") last = std::max(last, e.layer);
  for (const auto& e : r.layers)
    if (e.run == "baseline" && e.step == "prefill" && e.layer == last) {
      err += e.err_vs_fp32;
      ref += e.ref_fp32;
    }
  s.final_rel_err = ref > 0 ? std::sqrt(err / ref) : 0;
  int64_t match = 0, seqs = 0;
  for (const auto& l : r.logits)
    if (l.run == "baseline") {
      match += l.top1_match_fp32;
      seqs += l.sequences;
    }
  s.top1 = seqs > 0 ? static_cast<double>(match) / static_cast<double>(seqs) : 1.0;
  return s;
}

}  // namespace

JobSummary job_run(const spec::Job& job, collectives::Communicator& group, const RunnerOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string started = utc_now_iso();
  if (group.size() != job.layout.ranks())
    fail(ErrorKind::kInternal, "job {} needs {} ranks, group has {}", job.id, job.layout.ranks(), group.size());
  // fk plan records the workload as the architecture's family runs it (a vision
  // encoder's seq_len is its images' tokens); a hand-made job must say the same.
  if (const spec::Workload run = spec::family_workload(job.arch, job.workload); run != job.workload)
    fail(ErrorKind::kInvalidArgument,
         "job {}: {} runs workload '{}' with seq_len {} and decode_steps {} (its family's rule), but the job gives "
         "seq_len {} and decode_steps {}; plan the job with fk plan",
         job.id, job.arch.name, job.workload.name, run.seq_len, run.decode_steps, job.workload.seq_len,
         job.workload.decode_steps);
  inject_fault(group.rank(), options.attempt);
  const std::unique_ptr<kernels::Backend> backend =
      kernels::backend_create(job.backend, kernels::node_local_rank(), options.backend);
  const collectives::Grid grid(job.layout, group.rank());
  collectives::GroupComms groups = collectives::grid_split(group, grid);
  const ModelCommunicators comms(*backend, groups);
  const Placement pl = placement_of(grid);

  CandidateStage candidates(job, group, pl, static_cast<int>(std::max<int64_t>(1, options.threads_per_rank)), *backend,
                            options.quarantine_reason);
  candidates.build();

  ModelStageConfig mc;
  mc.arch = job.arch;
  mc.workload = job.workload;
  mc.placement = pl;
  mc.comms = comms.comms();
  mc.backend = backend.get();
  mc.seed = job.seed;
  mc.iterations = job.model_stage.enabled ? job.model_stage.iterations : 1;
  mc.graphs = job.model_stage.graphs;
  mc.reference = job.model_stage.reference;
  mc.rank = group.rank();
  mc.record_instances = job.kernel_stage.enabled || !candidates.empty();
  ModelStageOutput model;
  if (job.model_stage.enabled) {
    if (!candidates.empty()) {
      mc.baseline = candidates.baseline_set();
      mc.select = [&candidates](const std::vector<InstanceRecord>& inst) { return candidates.select(inst); };
    }
    model = model_stage_run(mc);
  } else {
    // Without the model stage only the op instances are needed: the shape pass finds
    // them without computing the model, so a published-size model is checked at its
    // real shapes on a machine that could not run it.
    model.instances = model_stage_instances(mc);
    if (!candidates.empty()) candidates.check(model.instances);
  }

  std::vector<KernelInstanceResult> kernels;
  std::string device_start, device_end;
  if (job.kernel_stage.enabled) {
    KernelStageConfig kc;
    for (const auto& i : model.instances)
      if (i.measured) kc.instances.push_back(i);
    kc.spec = job.kernel_stage;
    kc.seed = job.seed;
    kc.rank = group.rank();
    KernelStageOutput ko = kernel_stage_run(kc, *backend);
    kernels = std::move(ko.instances);
    device_start = fmt::format("rank {} {}: {}", group.rank(), backend->name(), ko.before.describe());
    device_end = fmt::format("rank {} {}: {}", group.rank(), backend->name(), ko.after.describe());
  }

  json payload = {{"host", hostname()},
                  {"steps", to_array(model.steps)},
                  {"memory", to_array(model.memory)},
                  {"ops", to_array(model.ops)},
                  {"layers", to_array(model.layers)},
                  {"logits", to_array(model.logits)},
                  {"kernels", to_array(kernels)},
                  {"candidate_instances", to_array(candidates.records())},
                  {"traced_rows", model.traced_rows_per_sequence},
                  {"device_state_start", device_start},
                  {"device_state_end", device_end}};
  // The fp32 logits of each replica come from its last stage's TP rank 0.
  const bool logits_sender = pl.last_stage() && pl.tp_rank == 0 && model.fp32_logits.defined();
  payload["has_logits"] = logits_sender;
  if (logits_sender) payload["logits_shape"] = model.fp32_logits.shape();

  if (group.rank() != 0) {
    send_bytes(group, json::to_msgpack(payload));
    if (logits_sender)
      group.send(model.fp32_logits.data(), static_cast<size_t>(model.fp32_logits.numel()), DType::kF32, 0, 3);
    group.barrier();
    return JobSummary{};
  }

  results::JobResult r;
  r.job = job;
  r.meta.campaign = options.campaign;
  r.meta.started_at = started;
  r.meta.fk_version = "0.1.0";
  r.meta.compiler = __VERSION__;
  r.meta.mpi_library = options.mpi_library;
  r.meta.blas = kernels::blas_info();
  r.meta.device = fmt::format("{}: {}", backend->name(), backend->facts().describe());
  r.meta.stage_backends = fmt::format("model: {}, kernel: {}, candidates: {}",
                                      job.model_stage.enabled ? std::string(device_kind_name(job.backend)) : "none",
                                      job.kernel_stage.enabled ? std::string(device_kind_name(job.backend)) : "none",
                                      candidates.devices());
  r.meta.threads_per_rank = options.threads_per_rank;
  r.traced_rows_per_sequence = model.traced_rows_per_sequence;
  // The estimate of the reference weights the model stage chose (rank 0's; every rank
  // decides alike from the same estimate and device kind).
  r.memory_estimate_bytes =
      spec::memory_estimate(job.arch, job.workload, job.layout, job.backend, model.reference).total();
  if (job.model_stage.enabled) r.reference_weights = spec::reference_weights_name(model.reference);
  const ModelFamily& family = model_family_of(job.arch);
  const auto steps = static_cast<int64_t>(family.steps(job.arch, job.workload).size());
  const ModelOutput output = family.output(job.arch);
  const bool keep_logits = job.model_stage.enabled && output.kind == OutputKind::kLogits &&
                           steps * job.workload.batch * output.width * 4 <= (int64_t{16} << 20);
  if (keep_logits) r.fp32_logits = Tensor::zeros(DType::kF32, {steps, job.workload.batch, output.width});
  auto place_logits = [&](const Tensor& part, int rank_of_sender) {
    if (!keep_logits) return;
    const collectives::Grid g(job.layout, rank_of_sender);
    Placement p = pl;
    p.dp_rank = g.dp_rank();
    const int64_t b = p.batch_size(job.workload), b0 = p.batch_begin(job.workload), v = output.width;
    for (int64_t s = 0; s < steps; ++s)
      std::memcpy(r.fp32_logits.data_as<float>() + (s * job.workload.batch + b0) * v,
                  part.data_as<float>() + s * b * v, static_cast<size_t>(b * v) * 4);
  };
  auto absorb = [&](const json& p, int from) {
    r.meta.rank_hosts.push_back(p.at("host"));
    if (const std::string s = p.at("device_state_start"); !s.empty()) r.meta.device_state_start.push_back(s);
    if (const std::string s = p.at("device_state_end"); !s.empty()) r.meta.device_state_end.push_back(s);
    from_array(p.at("steps"), r.steps);
    from_array(p.at("memory"), r.memory);
    from_array(p.at("ops"), r.ops);
    from_array(p.at("layers"), r.layers);
    from_array(p.at("logits"), r.logits);
    from_array(p.at("kernels"), r.kernels);
    from_array(p.at("candidate_instances"), r.candidate_instances);
    if (p.at("has_logits").get<bool>()) {
      Tensor part = Tensor::empty(DType::kF32, p.at("logits_shape").get<Shape>());
      if (from == 0) {
        part = model.fp32_logits;
      } else {
        group.recv(part.data(), static_cast<size_t>(part.numel()), DType::kF32, from, 3);
      }
      place_logits(part, from);
    }
  };
  absorb(payload, 0);
  for (int from = 1; from < group.size(); ++from) absorb(json::from_msgpack(recv_bytes(group, from)), from);
  if (!candidates.empty()) r.candidates = candidates.summarize(r.candidate_instances, r.layers, r.logits, r.steps);
  r.meta.finished_at = utc_now_iso();
  r.meta.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  results::job_result_write(job_result_path(options.results_dir, job.id), r);
  group.barrier();
  return summarize(r);
}

}  // namespace fk::runner
