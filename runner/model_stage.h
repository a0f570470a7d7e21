// The model stage of a job on one rank: the whole layer stack runs prefill and then
// every decode step, three ways —
//   fp32:      baseline implementations, fp32 weights (the numerical reference);
//   baseline:  baseline implementations in the workload dtype (what production runs);
//   selected:  the candidate set's implementations in the workload dtype (only when
//              the set replaces some op; otherwise it would repeat the baseline).
// Decode steps are teacher-forced with the fp32 run's greedy tokens, so every run
// sees the same inputs and per-step logits compare like for like. Recorded: per-layer
// relative L2 error of the residual stream against the fp32 and baseline runs, top-1
// agreement and KL divergence of the logits, and the time of every op, layer and step
// split into compute and communication, for `iterations` repetitions (iteration 0
// also provides the precision trace; later ones may replay decode steps as device
// graphs, ModelStageConfig::graphs). A step's time runs from staging its inputs until
// its device work is done; in iteration 0 it also includes bringing the outputs to the
// host in fp32 (what the trace compares), later iterations of a family that splits its
// step (Model::splits_step) leave them on the device, as a server that samples there.
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/memory.h"
#include "core/spec/workload.h"
#include "results/records.h"
#include "runner/model/family.h"
#include "runner/runtime.h"

#include <functional>
#include <optional>
#include <vector>

namespace fk::runner {

using results::KernelInstanceResult;
using results::LayerError;
using results::LogitStats;
using results::MemoryPeak;
using results::OpTiming;
using results::StepTiming;

struct ModelStageConfig {
  spec::Architecture arch;
  spec::Workload workload;
  Placement placement;
  ModelComms comms;
  uint64_t seed = 0;
  int64_t iterations = 1;
  int64_t rank = 0;                // rank within the job group (for records)
  // Where the model runs (the job's backend): weights, KV cache and activations live on
  // it and its baselines run. nullptr: a CPU backend of the stage's own. The shape pass
  // always runs on the host (nothing is computed). With a device backend, `comms` are
  // communicators for its buffers (Backend::communicator).
  kernels::Backend* backend = nullptr;
  std::optional<ImplSet> baseline; // the baseline run's implementations (default: the backend's baselines)
  std::optional<ImplSet> selected; // the candidate set's implementations, if it replaces any op
  // Alternatively, decided after the baseline run from the instances it recorded
  // (the candidate stage checks them first). Collective; nullopt: no selected run.
  std::function<std::optional<ImplSet>(const std::vector<InstanceRecord>&)> select;
  bool record_instances = true;    // collect the op instances for the kernel stage
  // Decode steps after iteration 0 as device graphs: each step is captured once
  // (Backend::capture of Model::forward) and replayed in every later iteration, its
  // time the graph's. Only where the backend has graphs, the family splits its step
  // (Model::splits_step), the rank's model has no multi-rank group (every rank would
  // have to agree on its captures: the multi-GPU issue) and no candidate can take part
  // (config.selected or config.select: candidates run in sandboxed workers, outside
  // any graph, so that baseline and selected runs are timed alike, eagerly). A capture
  // that fails leaves the rest of the stage eager, with a note naming why.
  bool graphs = true;
  // Where the fp32 reference run keeps its weights (core/spec/memory.h). kAuto streams
  // them where the family can (ModelFamily::streamed_weights), the workload dtype is
  // not fp32 and the resident estimate exceeds 90% of the backend's memory. kStreamed
  // is refused for a family that cannot stream and for an fp32 workload (its baseline
  // run would hold the same weights). A streamed run's step times include making its
  // layers' weights: it is the reference, not a contender.
  spec::ReferenceWeights reference = spec::ReferenceWeights::kAuto;
};

struct ModelStageOutput {
  std::vector<StepTiming> steps;
  std::vector<MemoryPeak> memory;  // one per run, where the backend's allocator counts
  std::vector<OpTiming> ops;
  std::vector<LayerError> layers;
  std::vector<LogitStats> logits;
  // From the baseline run: every distinct call of every step; those of the measured
  // step carry measured = true (the kernel stage replays only those).
  std::vector<InstanceRecord> instances;
  Tensor fp32_logits;                     // last stage: [steps, batch_size, vocab] of the fp32 run
  int64_t traced_rows_per_sequence = 0;   // prefill rows traced per sequence (all, or the last)
  // How the fp32 run held its weights (kResident or kStreamed; kAuto when it did not run).
  spec::ReferenceWeights reference = spec::ReferenceWeights::kAuto;
};

// model_stage.reference auto's rule: stream the reference's weights when the resident
// estimate (core/spec/memory.h) exceeds 90% of the device's memory (the rest is the
// estimate's margin, the CUDA context and the allocator's slack). Unknown (0) device
// memory keeps them resident.
bool reference_needs_streaming(int64_t resident_bytes, int64_t device_bytes);

// Why a device of `device_bytes` cannot run a model stage whose estimate is `need_bytes`
// (the estimate of the chosen reference weights), with what to change; "" when it fits
// or the device's memory is unknown. The stage refuses such a job before making any
// weights (device backends only: the host can swap).
std::string model_stage_memory_refusal(int64_t need_bytes, int64_t device_bytes, const std::string& device,
                                       spec::ReferenceWeights reference);

// Runs the model stage; collective: every rank of the job group calls it.
ModelStageOutput model_stage_run(const ModelStageConfig& config);

// The shape pass: the op instances model_stage_run's baseline run would record (every
// step's calls, the measured step's marked), found without computing anything — the
// weights are placeholders that take no memory until written and no op runs
// (Runtime::set_shapes_only) — so that the kernel stage and the candidates' gates can
// see the published model's shapes on a machine that could not run it. Reads only
// arch, workload, placement, comms, seed and device. Collective in the
// sense that every rank of the group calls it (no data moves).
std::vector<InstanceRecord> model_stage_instances(const ModelStageConfig& config);

// The prompt token ids of this replica's sequences ([batch_size, seq_len] int64), drawn
// from the seed so that every layout sees the same prompts.
Tensor model_stage_prompt(const spec::Architecture& a, const spec::Workload& w, const Placement& p, uint64_t seed);

}  // namespace fk::runner
