// The kernel stage of a job on one rank: every op instance the model produced at this
// rank's real (sharded) shapes is replayed alone on the job's backend, through the
// backend's baseline of the op —
//   precision: `rounds` sets of fresh random inputs drawn on the host (the same values
//              on every backend), uploaded, run, the outputs downloaded and compared
//              with the fp64 reference (relative L2, max abs, fraction inside the op's
//              per-dtype atol/rtol, NaN/Inf);
//   timing:    through the measurement driver (kernels/measure.h): warm-up, then
//              `iterations` timed calls on the backend's timer, rotating over input
//              sets on the device (and flushing the cache when the sets are small), with
//              in-place arguments restored (untimed) before every call; the device's
//              state is recorded around the loop and throttled samples are counted.
#pragma once

#include "core/spec/campaign.h"
#include "kernels/backend.h"
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
  double max_rotation_bytes = double(size_t{1} << 30);  // cap on device memory for rotated input sets
};

struct KernelStageOutput {
  std::vector<KernelInstanceResult> instances;
  kernels::DeviceState before, after;  // device state around the stage
};

// Runs every instance through `backend`'s baseline. An op without a baseline on the
// backend, or whose baseline refuses the instance, throws fk::Error(kUnsupported).
KernelStageOutput kernel_stage_run(const KernelStageConfig& config, kernels::Backend& backend);

// "tokens=512,hidden=4096" and "1e-06,1" forms used in records.
std::string kernel_shape_string(const kernels::OpShape& shape);
std::string kernel_params_string(const kernels::OpShape& shape);

}  // namespace fk::runner
