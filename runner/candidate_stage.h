// The candidate set of one job, on one rank: build every candidate (the group leader
// first, the others then hit the build cache), check each one's op instances out of
// process (runner/candidate_check.h), agree across the group which candidates are safe
// to run inside the model (those that did not crash, hang, fail, write out of bounds or
// leave work running), and summarise verdicts with the model-level evidence.
#pragma once

#include "collectives/communicator.h"
#include "core/spec/job.h"
#include "kernels/candidate/candidate_impl.h"
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
  CandidateStage(const spec::Job& job, collectives::Communicator& group, const Placement& placement, int threads,
                 std::string quarantine_reason = "");

  bool empty() const { return entries_.empty(); }
  // Builds and loads every candidate. Collective over the group.
  void build();
  // The model stage's hook after its baseline run: checks this rank's instances, agrees
  // with the group, returns the implementation set of the selected run (nullopt when
  // no candidate may run in-process). Collective over the group.
  std::optional<ImplSet> select(const std::vector<InstanceRecord>& instances);
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
    kernels::VerdictReason setup;  // manifest, build and load problems
    std::shared_ptr<kernels::LoadedCandidate> loaded;
    std::vector<CandidateInstanceResult> results;
    bool in_model = false;  // took part in the selected run
  };
  void build_one(Entry& e);

  const spec::Job& job_;
  collectives::Communicator& group_;
  Placement pl_;
  int threads_;
  std::string quarantine_;
  std::vector<Entry> entries_;
  std::vector<std::shared_ptr<kernels::OpImpl>> owned_;  // implementations the selected ImplSet points to
};

// Whether a verdict still lets the candidate run inside the runner's process.
bool candidate_safe_in_process(kernels::Verdict v, const std::string& reason);

}  // namespace fk::runner
