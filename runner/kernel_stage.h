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
#include "kernels/measure.h"
#include "runner/runtime.h"
#include "results/records.h"

#include <functional>
#include <string>
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

// How one instance is timed (the kernel stage's timing half, shared with the op
// benchmark bench/gpu/bench_ops.cc so that both measure the same way).
struct KernelTimingOptions {
  uint64_t seed = 0;
  int64_t warmup = 3, iterations = 20;
  double max_rotation_bytes = double(size_t{1} << 30);
  std::function<void()> tick;  // after every timed call (progress), or empty
  kernels::DeviceTracer* tracer = nullptr;  // MeasureOptions::tracer (benchmarks only)
};

// The stream name the instance's inputs are drawn under ("kernel.<op>.<role>.<shape>.<params>").
std::string kernel_instance_stream(const InstanceRecord& inst);
// `backend`'s baseline of inst.op, checked to accept `call`; throws fk::Error(kUnsupported)
// naming the op, role, shape and dtype when there is none or it refuses.
const kernels::OpImpl& kernel_instance_baseline(kernels::Backend& backend, const kernels::OpCall& call,
                                                const InstanceRecord& inst);
struct KernelTiming {
  kernels::MeasureResult measure;
  const kernels::OpImpl* impl = nullptr;  // what was timed
  double bytes = 0, flops = 0;            // of one call (OpDef::bytes / flops)
};
// Times `impl` (nullptr: the backend's baseline, kernel_instance_baseline) at the
// instance's shape on `backend`: input sets drawn by seed and uploaded, rotated (and the
// cache flushed when they are few), in-place arguments restored untimed before every
// call, through the measurement driver. An audit problem throws fk::Error(kRuntime).
KernelTiming kernel_instance_time(kernels::Backend& backend, const kernels::OpImpl* impl, const InstanceRecord& inst,
                                  const KernelTimingOptions& options);

// Runs every instance through `backend`'s baseline. An op without a baseline on the
// backend, or whose baseline refuses the instance, throws fk::Error(kUnsupported).
KernelStageOutput kernel_stage_run(const KernelStageConfig& config, kernels::Backend& backend);

// "tokens=512,hidden=4096" and "1e-06,1" forms used in records.
std::string kernel_shape_string(const kernels::OpShape& shape);
std::string kernel_params_string(const kernels::OpShape& shape);

}  // namespace fk::runner
