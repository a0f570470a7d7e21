// Per-rank memory estimate of a job, used by `fk plan` and the executors' packing.
//
// The formula (documented in docs/specs.md, "Memory estimate") counts, for the
// fullest pipeline stage of the layout, at the peak of the model stage, whose runs
// (the fp32 reference, then the baseline and candidate runs in the workload dtype)
// come one after another:
//   weights     parameters held by the rank x 4 (the fp32 run's); on the CPU backend
//               the fp32 master stays beside the rounded copy, so x (4 + bytes);
//   kv_cache    the fp32 run's: 2 x (batch/dp) x positions x kv_heads_per_rank x
//               head_dim x 4 per layer, positions capped at the window on sliding layers;
//   activations (batch/dp) x seq_len tokens x per-token working set (fp32), plus
//               streaming attention scores and the last-token logits.
// A device backend gives back what a run cached before the next run loads (the CUDA
// caching allocator releases its free blocks when a request does not fit).
//
// With the reference's weights streamed (ReferenceWeights::kStreamed) the fp32 run holds
// the weights outside the layers and one layer's at a time, and no run keeps an fp32
// master; the peak is then the larger of that run and the workload-dtype runs (all
// weights, the cache and the working set in the workload dtype).
#pragma once

#include "core/device.h"
#include "core/spec/architecture.h"
#include "core/spec/workload.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fk::spec {

// Where the model stage's fp32 reference run keeps its weights (model_stage.reference):
//   kResident  all of them for the whole run, like the other runs;
//   kStreamed  one layer's at a time, made from the weight source just before the layer
//              runs, at every step: for a model whose fp32 weights the device cannot
//              hold (Mixtral-8x7B's are 187 GB), at the cost of remaking them each step;
//   kAuto      kStreamed where the resident estimate exceeds the device's memory and
//              the model family can stream, else kResident (the runner decides: it
//              knows the device; `fk plan` estimates auto as resident).
enum class ReferenceWeights { kAuto, kResident, kStreamed };
const char* reference_weights_name(ReferenceWeights r);  // "auto", "resident", "streamed"
// Every value with its name, for readers of the setting (YAML, JSON).
const std::vector<std::pair<std::string, ReferenceWeights>>& reference_weights_choices();

struct MemoryEstimate {
  int64_t parameters = 0;  // parameters held by the rank
  // Of those, the layers' (every layer of the rank's stage), and its largest layer's:
  // what a streamed reference run holds at once besides the weights outside the layers.
  int64_t layer_parameters = 0;
  int64_t largest_layer_parameters = 0;
  int64_t weights_bytes = 0;
  int64_t kv_cache_bytes = 0;
  int64_t activation_bytes = 0;
  int64_t total() const { return weights_bytes + kv_cache_bytes + activation_bytes; }
};

// Tokens a model's fused_moe call takes at most: a longer step runs its routed experts in
// chunks of this many tokens, as vLLM's fused_experts does (VLLM_FUSED_MOE_CHUNK_SIZE,
// default 16 x 1024 in vLLM's envs.py), which bounds the experts' scratch.
inline constexpr int64_t kMoeChunkTokens = 16 * 1024;
// Bytes of the CUDA fused_moe baseline's largest scratch for one call of `tokens` tokens
// on a rank holding expert slices of `inter_local` (its cuBLASLt path: the gathered rows
// in the element type, the gate/up products in fp32, the activation in the element type
// and the down products in fp32, every expert's rows padded to 256-row tiles).
int64_t moe_scratch_bytes(const Architecture& a, int64_t tokens, int64_t inter_local, int64_t elem_bytes);

// Heads of each kind one TP rank holds (kv heads are replicated when fewer than tp).
int64_t heads_per_rank(const Architecture& a, int64_t tp);
int64_t kv_heads_per_rank(const Architecture& a, int64_t tp);
// Layers of pipeline stage `stage` (contiguous ranges; the first stages take the remainder).
int64_t stage_first_layer(int64_t layers, int64_t pp, int64_t stage);
int64_t stage_layer_count(int64_t layers, int64_t pp, int64_t stage);
// Parameters of decoder layer `layer` held by one TP rank.
int64_t layer_parameters_per_rank(const Architecture& a, int64_t layer, int64_t tp);

// What the fullest rank holds at its peak on `backend` (docs/specs.md "Memory estimate"),
// with the reference's weights `reference` (kAuto estimates as kResident).
MemoryEstimate memory_estimate(const Architecture& a, const Workload& w, const Layout& l, DeviceKind backend,
                               ReferenceWeights reference = ReferenceWeights::kResident);

// "1.5 GiB", "12.0 MiB", "512 B".
std::string bytes_human(int64_t bytes);

}  // namespace fk::spec
