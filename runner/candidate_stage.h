// The candidate set of one job, on one rank: build every candidate (the group leader
// first, the others then hit the build cache), check each one's op instances — every
// shape the model stage will call, the prompt's included — in sandboxed workers
// (runner/candidate_check.h), agree across the group which candidates may take part
// in the model's selected run (those that did not crash, hang, fail, write out of
// bounds or leave work running), and summarise verdicts with the model-level evidence.
//
// fk-runner never loads candidate code: in the selected run a candidate's op is a
// call into its own worker (kernels::worker_op_impl), and in the baseline run the
// same ops go through a baseline worker, so that both runs pay the same call
// overhead and the end-to-end speedup compares like with like.
#pragma once

#include "collectives/communicator.h"
#include "core/spec/job.h"
#include "kernels/candidate/worker.h"
#include "kernels/candidate/compile.h"
#include "results/records.h"
#include "runner/candidate_check.h"
#include "runner/model/placement.h"
#include "runner/runtime.h"

#include <optional>
#include <string>
#include <vector>

namespace fk::runner {

class CandidateStage {
 public:
  // `backend`: the job's backend; a candidate for its device kind runs in workers whose
  // arenas live on it, a CPU candidate in host workers, any other is UNSUPPORTED.
  CandidateStage(const spec::Job& job, collectives::Communicator& group, const Placement& placement, int threads,
                 kernels::Backend& backend, std::string quarantine_reason = "");

  bool empty() const { return entries_.empty(); }
  // Builds and loads every candidate. Collective over the group.
  void build();
  // The model stage's hook after its baseline run: checks this rank's instances, agrees
  // with the group, returns the implementation set of the selected run (nullopt when
  // no candidate may run in-process). Collective over the group.
  std::optional<ImplSet> select(const std::vector<InstanceRecord>& instances);
  // The same checks and agreement without a selected run (a job without the model
  // stage: its instances come from the shape pass). Collective over the group.
  void check(const std::vector<InstanceRecord>& instances);
  // The baseline implementation set of the baseline run (the job backend's baselines):
  // the candidates' ops through a baseline worker (see above). Not collective.
  ImplSet baseline_set();
  // Where the runnable candidates' workers run: "cpu", "cuda", "cpu and cuda", or "none".
  std::string devices() const;
  // This rank's instance records.
  std::vector<results::CandidateInstanceRecord> records() const;
  // Group leader: one summary per candidate from every rank's records and the model trace.
  std::vector<results::CandidateSummary> summarize(const std::vector<results::CandidateInstanceRecord>& all,
                                                   const std::vector<results::LayerError>& layers,
                                                   const std::vector<results::LogitStats>& logits,
                                                   const std::vector<results::StepTiming>& steps) const;

 private:
  struct Entry {
    std::string op, folder;
    std::optional<kernels::CandidateManifest> manifest;
    kernels::CompileResult build;
    kernels::VerdictReason setup{kernels::Verdict::kPassed, ""};  // manifest and build problems
    bool runnable = false;  // built for this job's backend
    std::vector<CandidateInstanceResult> results;
    std::string sandbox;
    bool in_model = false;  // took part in the selected run
    std::shared_ptr<kernels::RemoteFailure> model_failure = std::make_shared<kernels::RemoteFailure>();
  };
  void build_one(Entry& e);
  // The backend a runnable entry's workers use: nullptr (host) for a CPU candidate.
  kernels::Backend* device_of(const Entry& e) const;
  // The model stage's baseline of `op` (on the job's backend, where the model runs): what
  // a worker-backed op falls back to.
  const kernels::OpImpl& model_baseline(const std::string& op) const;
  // Checks this rank's instances; returns per entry whether it may not join the model
  // stage, agreed over the group (the maximum). Collective.
  std::vector<int32_t> gate(const std::vector<InstanceRecord>& instances);

  const spec::Job& job_;
  collectives::Communicator& group_;
  kernels::Backend& backend_;
  Placement pl_;
  int threads_;
  std::string quarantine_;
  std::vector<Entry> entries_;
  std::vector<std::shared_ptr<kernels::OpImpl>> owned_;  // implementations the ImplSets point to
  std::vector<std::shared_ptr<kernels::Worker>> workers_;
};

// Whether a verdict still lets the candidate take part in the model stage (in its worker).
bool candidate_may_join_model(kernels::Verdict v, const std::string& reason);

}  // namespace fk::runner
