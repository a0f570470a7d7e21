// JobDigest: the figures of one job file that campaign summaries, reports and
// comparisons need, read from the job's root group (a job file's root, or
// /jobs/<id> in a campaign file). Read-only; the layout it reads is the per-job
// schema of docs/results-schema.md.
//
// Definitions (docs/results-schema.md, "Definitions of the figures"):
//  - model-stage time of a run ("baseline", "selected", "fp32") and the end-to-end
//    speedup: results/model_time.h, the functions the runner's candidates/summary
//    e2e_speedup comes from (per iteration, the sum over steps of the slowest rank's
//    step time; the median over iterations). compute_s and comm_s: the same with the
//    mean over ranks of the step's compute and communication time (so compute_s +
//    comm_s <= mean-rank step time).
//  - last-layer error of a run: rel_err_vs_fp32 of the highest layer of the prefill
//    step; top-1 and KL: means over steps weighted by sequences.
// Missing attributes or tables (an older or failed job) leave defaults (NaN, 0, "").
// Files that are not readable throw fk::Error naming the file and object.
#pragma once

#include "results/h5/group.h"

#include <cstdint>
#include <string>

namespace fk::results {

// What identifies a job and its place in the campaign (root attributes + family).
struct JobKeys {
  std::string job_id, campaign, architecture, preset, model_type, family;
  // The FastKernels category of the architecture (spec::fastkernels_category_of of the
  // job_json's architecture); "" when that is absent or does not read back.
  std::string category;
  std::string workload, phase, dtype, layout;
  int64_t tp = 1, pp = 1, dp = 1, ranks = 1;
  std::string candidate_set, backend;
  int64_t seed = 0, repetition = 0;
};

struct RunFigures {
  double model_s = 0, compute_s = 0, comm_s = 0;  // NaN when the run is absent
  double mean_rank_s = 0;                         // mean over ranks instead of the max
  double last_layer_err = 0, top1 = 0, kl = 0;    // vs the fp32 run
  int64_t iterations = 0;
  bool present = false;
};

struct JobDigest {
  JobKeys keys;
  std::string status, error, started_at, device, fk_version;
  double wall_s = 0;
  int64_t kernels_total = 0, kernels_passed = 0;
  double kernel_max_rel_l2 = 0;  // worst kernel-stage rel L2 vs fp64 (NaN without instances)
  RunFigures baseline, selected;
  int64_t candidates = 0, candidates_passed = 0;
  double e2e_speedup = 0;  // model_time_speedup(baseline.model_s, selected.model_s): NaN without a selected run
  // model_stage/memory: the largest peak over runs and ranks (the fullest rank's), and
  // the planner's per-rank estimate; 0 where the job file has none.
  int64_t peak_memory_bytes = 0, peak_reserved_bytes = 0, memory_estimate_bytes = 0;
};

// Reads the digest of the job rooted at `root`. `fallback_id` names the job when the
// root has no job_id attribute (the file name stem).
JobDigest job_digest_read(const h5::Group& root, const std::string& fallback_id = "");

// The job's "family" from its job_json (architecture.family), or model_type when the
// spec leaves it empty. "" when neither can be read.
std::string job_family(const h5::Group& root, const std::string& model_type);

// The layout without its factors of 1: "tp2", "tp2pp2", "pp2dp2"; "tp1" for one rank.
std::string layout_short(const JobKeys& keys);

// "llama-3.1-8b/prefill-64/tp2pp1dp1" plus "/<candidate set>" when there is one.
std::string job_label(const JobKeys& keys);

}  // namespace fk::results
