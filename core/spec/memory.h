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
#pragma once

#include "core/device.h"
#include "core/spec/architecture.h"
#include "core/spec/workload.h"

#include <cstdint>

namespace fk::spec {

struct MemoryEstimate {
  int64_t parameters = 0;  // parameters held by the rank
  int64_t weights_bytes = 0;
  int64_t kv_cache_bytes = 0;
  int64_t activation_bytes = 0;
  int64_t total() const { return weights_bytes + kv_cache_bytes + activation_bytes; }
};

// Heads of each kind one TP rank holds (kv heads are replicated when fewer than tp).
int64_t heads_per_rank(const Architecture& a, int64_t tp);
int64_t kv_heads_per_rank(const Architecture& a, int64_t tp);
// Layers of pipeline stage `stage` (contiguous ranges; the first stages take the remainder).
int64_t stage_first_layer(int64_t layers, int64_t pp, int64_t stage);
int64_t stage_layer_count(int64_t layers, int64_t pp, int64_t stage);
// Parameters of decoder layer `layer` held by one TP rank.
int64_t layer_parameters_per_rank(const Architecture& a, int64_t layer, int64_t tp);

// What the fullest rank holds at its peak on `backend` (docs/specs.md "Memory estimate").
MemoryEstimate memory_estimate(const Architecture& a, const Workload& w, const Layout& l, DeviceKind backend);

// "1.5 GiB", "12.0 MiB", "512 B".
std::string bytes_human(int64_t bytes);

}  // namespace fk::spec
