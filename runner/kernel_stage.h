// The kernel stage of a job on one rank: every op instance the model produced at this
// rank's real (sharded) shapes is replayed alone —
//   precision: `rounds` sets of fresh random inputs, the implementation's outputs
//              against the fp64 reference (relative L2, max abs, fraction inside the
//              op's per-dtype atol/rtol, NaN/Inf);
//   timing:    warm-up calls, then `iterations` timed calls (steady clock), rotating
//              over several input sets and touching a flush buffer between calls when
//              the sets are small, so no call reads inputs a previous call left in
//              cache; in-place arguments are restored (untimed) before every call.
#pragma once

#include "core/spec/campaign.h"
#include "runner/runtime.h"
#include "results/records.h"

#include <vector>

namespace fk::runner {

using results::KernelInstanceResult;
using results::LayerError;
using results::LogitStats;
using results::OpTiming;
using results::StepTiming;

struct KernelStageConfig {
  std::vector<InstanceRecord> instances;
  spec::KernelStageSpec spec;
  uint64_t seed = 0;
  int64_t rank = 0;
  size_t flush_bytes = size_t{16} << 20;       // cache-flush buffer (CPU: last-level cache scale)
  size_t max_rotation_bytes = size_t{1} << 30; // cap on memory for rotated input sets
};

std::vector<KernelInstanceResult> kernel_stage_run(const KernelStageConfig& config, const ImplSet& impls);

// "tokens=512,hidden=4096" and "1e-06,1" forms used in records.
std::string kernel_shape_string(const kernels::OpShape& shape);
std::string kernel_params_string(const kernels::OpShape& shape);

}  // namespace fk::runner
