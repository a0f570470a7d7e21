#include "results/records.h"

namespace fk::results {

using nlohmann::json;

json to_json(const StepTiming& r) {
  return {{"run", r.run}, {"iteration", r.iteration}, {"step", r.step}, {"rank", r.rank},
          {"total_s", r.total_s}, {"compute_s", r.compute_s}, {"comm_s", r.comm_s}, {"graph", r.graph}};
}
void from_json(const json& j, StepTiming& r) {
  r = {j.at("run"),     j.at("iteration"), j.at("step"),   j.at("rank"), j.at("total_s"),
       j.at("compute_s"), j.at("comm_s"),  j.value("graph", false)};
}

json to_json(const MemoryPeak& r) {
  return {{"run", r.run},
          {"rank", r.rank},
          {"device", r.device},
          {"peak_in_use_bytes", r.peak_in_use_bytes},
          {"peak_reserved_bytes", r.peak_reserved_bytes}};
}
void from_json(const json& j, MemoryPeak& r) {
  r = {j.at("run"), j.at("rank"), j.at("device"), j.at("peak_in_use_bytes"), j.at("peak_reserved_bytes")};
}

json to_json(const OpTiming& r) {
  return {{"run", r.run},   {"iteration", r.iteration}, {"step", r.step},   {"rank", r.rank},
          {"layer", r.layer}, {"op", r.op},             {"role", r.role},   {"comm", r.comm},
          {"calls", r.calls}, {"seconds", r.seconds},   {"bytes", r.bytes}};
}
void from_json(const json& j, OpTiming& r) {
  r = {j.at("run"), j.at("iteration"), j.at("step"), j.at("rank"), j.at("layer"), j.at("op"),
       j.at("role"), j.at("comm"), j.at("calls"), j.at("seconds"), j.at("bytes")};
}

json to_json(const LayerError& r) {
  return {{"run", r.run}, {"step", r.step}, {"layer", r.layer}, {"err_vs_fp32", r.err_vs_fp32},
          {"ref_fp32", r.ref_fp32}, {"err_vs_baseline", r.err_vs_baseline}, {"ref_baseline", r.ref_baseline},
          {"rows", r.rows}};
}
void from_json(const json& j, LayerError& r) {
  r = {j.at("run"), j.at("step"), j.at("layer"), j.at("err_vs_fp32"), j.at("ref_fp32"),
       j.at("err_vs_baseline"), j.at("ref_baseline"), j.at("rows")};
}

json to_json(const LogitStats& r) {
  return {{"run", r.run}, {"step", r.step}, {"sequences", r.sequences}, {"top1_match_fp32", r.top1_match_fp32},
          {"top1_match_baseline", r.top1_match_baseline}, {"kl_sum_fp32", r.kl_sum_fp32},
          {"kl_sum_baseline", r.kl_sum_baseline}};
}
void from_json(const json& j, LogitStats& r) {
  r = {j.at("run"), j.at("step"), j.at("sequences"), j.at("top1_match_fp32"), j.at("top1_match_baseline"),
       j.at("kl_sum_fp32"), j.at("kl_sum_baseline")};
}

json to_json(const KernelInstanceResult& r) {
  return {{"op", r.op}, {"role", r.role}, {"impl", r.impl}, {"shape", r.shape}, {"params", r.params},
          {"dtype", std::string(dtype_name(r.dtype))}, {"calls_per_step", r.calls_per_step}, {"layers", r.layers},
          {"flops", r.flops}, {"bytes", r.bytes}, {"rel_l2", r.rel_l2}, {"max_abs", r.max_abs},
          {"matched_fraction", r.matched_fraction}, {"nan", r.nan}, {"inf", r.inf}, {"rounds", r.rounds},
          {"passed", r.passed}, {"atol", r.atol}, {"rtol", r.rtol}, {"rank", r.rank}, {"buffer_sets", r.buffer_sets},
          {"seconds", r.seconds}, {"throttled", r.throttled}};
}
void from_json(const json& j, KernelInstanceResult& r) {
  r.op = j.at("op");
  r.role = j.at("role");
  r.impl = j.at("impl");
  r.shape = j.at("shape");
  r.params = j.at("params");
  r.dtype = dtype_parse(j.at("dtype").get<std::string>()).value_or(DType::kF32);
  r.calls_per_step = j.at("calls_per_step");
  r.layers = j.at("layers").get<std::vector<int64_t>>();
  r.flops = j.at("flops");
  r.bytes = j.at("bytes");
  r.rel_l2 = j.at("rel_l2");
  r.max_abs = j.at("max_abs");
  r.matched_fraction = j.at("matched_fraction");
  r.nan = j.at("nan");
  r.inf = j.at("inf");
  r.rounds = j.at("rounds");
  r.passed = j.at("passed");
  r.atol = j.at("atol");
  r.rtol = j.at("rtol");
  r.rank = j.at("rank");
  r.buffer_sets = j.at("buffer_sets");
  r.seconds = j.at("seconds").get<std::vector<double>>();
  r.throttled = j.value("throttled", int64_t{0});
}

json to_json(const CandidateInstanceRecord& r) {
  return {{"candidate", r.candidate}, {"op", r.op}, {"role", r.role}, {"shape", r.shape}, {"params", r.params},
          {"dtype", r.dtype}, {"rank", r.rank}, {"verdict", r.verdict}, {"reason", r.reason}, {"rel_l2", r.rel_l2},
          {"max_abs", r.max_abs}, {"matched_fraction", r.matched_fraction}, {"baseline_rel_l2", r.baseline_rel_l2},
          {"nan", r.nan}, {"inf", r.inf}, {"candidate_median_s", r.candidate_median_s},
          {"baseline_median_s", r.baseline_median_s}, {"speedup", r.speedup}, {"reuse_ratio", r.reuse_ratio},
          {"candidate_s", r.candidate_s}, {"baseline_s", r.baseline_s}, {"candidate_span_s", r.candidate_span_s},
          {"candidate_wall_s", r.candidate_wall_s}, {"baseline_wall_s", r.baseline_wall_s}, {"door_s", r.door_s},
          {"clock_excess_s", r.clock_excess_s}, {"clock_allowance_s", r.clock_allowance_s},
          {"clock_charged_s", r.clock_charged_s}};
}

void from_json(const json& j, CandidateInstanceRecord& r) {
  r.candidate = j.at("candidate");
  r.op = j.at("op");
  r.role = j.at("role");
  r.shape = j.at("shape");
  r.params = j.at("params");
  r.dtype = j.at("dtype");
  r.rank = j.at("rank");
  r.verdict = j.at("verdict");
  r.reason = j.at("reason");
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
  r.candidate_span_s = j.value("candidate_span_s", std::vector<double>{});
  r.candidate_wall_s = j.value("candidate_wall_s", std::vector<double>{});
  r.baseline_wall_s = j.value("baseline_wall_s", std::vector<double>{});
  r.door_s = j.value("door_s", 0.0);
  r.clock_excess_s = j.value("clock_excess_s", 0.0);
  r.clock_allowance_s = j.value("clock_allowance_s", 0.0);
  r.clock_charged_s = j.value("clock_charged_s", 0.0);
}

}  // namespace fk::results
