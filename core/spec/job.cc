#include "core/spec/job.h"

#include "core/error.h"
#include "core/hash.h"

#include <fmt/format.h>

namespace fk::spec {

std::string job_id_part(const Architecture& arch) {
  Json j = to_json(arch);
  for (const char* meta : {"source", "hf_id", "family"}) j.erase(meta);  // notes, not content
  return j.dump();
}

std::string job_id_part(const Workload& workload) { return to_json(workload).dump(); }

std::string job_compute_id(const std::string& arch_part, const std::string& workload_part, const Job& job) {
  Hasher h;
  h.str(arch_part).str(workload_part);
  h.u64(static_cast<uint64_t>(job.layout.tp)).u64(static_cast<uint64_t>(job.layout.pp));
  h.u64(static_cast<uint64_t>(job.layout.dp));
  h.str(job.candidates.name).u64(job.candidates.ops.size());
  for (const auto& [op, folder] : job.candidates.ops) h.str(op).str(folder);
  h.str(device_kind_name(job.backend)).u64(job.seed).u64(static_cast<uint64_t>(job.repetition));
  h.str(to_json(job.kernel_stage).dump()).str(to_json(job.model_stage).dump());
  return h.hex(12);
}

std::string job_compute_id(const Job& job) {
  return job_compute_id(job_id_part(job.arch), job_id_part(job.workload), job);
}

Json job_to_json(const Job& job, Json arch, Json workload) {
  return Json{{"id", job.id},
              {"architecture", std::move(arch)},
              {"workload", std::move(workload)},
              {"layout", to_json(job.layout)},
              {"candidates", to_json(job.candidates)},
              {"backend", device_kind_name(job.backend)},
              {"seed", job.seed},
              {"repetition", job.repetition},
              {"kernel_stage", to_json(job.kernel_stage)},
              {"model_stage", to_json(job.model_stage)},
              {"time_limit_s", job.time_limit_s},
              {"memory",
               {{"parameters", job.memory.parameters},
                {"weights_bytes", job.memory.weights_bytes},
                {"kv_cache_bytes", job.memory.kv_cache_bytes},
                {"activation_bytes", job.memory.activation_bytes}}}};
}

Json job_to_json(const Job& job) { return job_to_json(job, to_json(job.arch), to_json(job.workload)); }

Job job_fields_from_json(const JsonIn& in) {
  const std::string& path = in.path();
  Job job;
  job.id = in.at("id").str();
  job.layout = layout_from_json(in.at("layout").json(), path + "/layout");
  job.candidates = candidate_set_from_json(in.at("candidates").json(), path + "/candidates");
  const std::string backend = in.at("backend").str();
  if (const auto kind = device_kind_parse(backend)) job.backend = *kind;
  else in.at("backend").fail(fmt::format("unknown backend '{}' (expected cpu or cuda)", backend));
  const JsonIn seed = in.at("seed");
  if (!seed.json().is_number_unsigned() && !seed.json().is_number_integer()) seed.fail("expected an integer");
  job.seed = seed.json().get<uint64_t>();
  job.repetition = in.at("repetition").i64(0, limits::kRepetitions.max - 1);  // 0-based
  job.kernel_stage = kernel_stage_from_json(in.at("kernel_stage").json(), path + "/kernel_stage");
  job.model_stage = model_stage_from_json(in.at("model_stage").json(), path + "/model_stage");
  job.time_limit_s = in.at("time_limit_s").f64(limits::kDuration);
  const JsonIn mem = in.at("memory");
  job.memory.parameters = mem.at("parameters").i64(0);
  job.memory.weights_bytes = mem.at("weights_bytes").i64(0);
  job.memory.kv_cache_bytes = mem.at("kv_cache_bytes").i64(0);
  job.memory.activation_bytes = mem.at("activation_bytes").i64(0);
  return job;
}

void job_check_id(const JsonIn& in, const Job& job, const std::string& arch_part, const std::string& workload_part) {
  const std::string expect = job_compute_id(arch_part, workload_part, job);
  if (expect != job.id)
    in.at("id").fail(fmt::format("id '{}' does not match the job's content (expected '{}'); "
                                 "regenerate the job file with fk plan --emit",
                                 job.id, expect));
}

Job job_from_json(const Json& j, const std::string& path) {
  const JsonIn in(j, path);
  Job job = job_fields_from_json(in);
  job.arch = architecture_from_json(in.at("architecture").json(), path + "/architecture");
  job.workload = workload_from_json(in.at("workload").json(), path + "/workload");
  job_check_id(in, job, job_id_part(job.arch), job_id_part(job.workload));
  return job;
}

}  // namespace fk::spec
