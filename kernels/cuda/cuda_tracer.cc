#include "kernels/cuda/cuda_tracer.h"

#include "core/error.h"
#include "kernels/cuda/cupti_trace.h"

#include <cuda_runtime.h>

#include <fmt/format.h>
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace fk::cuda {
namespace {

// Total length covered by the intervals [start, end) (overlaps counted once).
uint64_t union_length(std::vector<std::pair<uint64_t, uint64_t>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  uint64_t total = 0, open = 0, close = 0;
  bool any = false;
  for (const auto& [start, end] : intervals) {
    if (any && start <= close) {
      close = std::max(close, end);
      continue;
    }
    if (any) total += close - open;
    open = start, close = end, any = true;
  }
  if (any) total += close - open;
  return total;
}

std::string error_text(cudaError_t e) { return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e)); }

std::string describe(const DeviceActivity& a) {
  using Kind = DeviceActivity::Kind;
  const char* kind = a.kind == Kind::kKernel ? "kernel" : a.kind == Kind::kMemcpy ? "copy" : "memset";
  return fmt::format("{} {} on stream {}", kind, a.name.substr(0, 120), a.stream_id);
}

class CudaTracer final : public kernels::DeviceTracer {
 public:
  CudaTracer(int device, cudaStream_t stream, std::unique_ptr<ActivityTrace> trace)
      : device_(device), stream_(stream), trace_(std::move(trace)), stream_id_(trace_->stream_id(stream)) {}

  kernels::DeviceWork begin() override {
    cudaSetDevice(device_);
    kernels::DeviceWork w;
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) w.error = error_text(e);
    summarize(trace_->collect(), std::numeric_limits<uint64_t>::max(), w);
    dropped_ = trace_->dropped();
    return w;
  }

  kernels::DeviceWork end() override {
    cudaSetDevice(device_);
    kernels::DeviceWork w;
    const cudaError_t on_stream = cudaStreamSynchronize(stream_);
    const uint64_t stream_done = trace_->now_ns();
    const cudaError_t on_device = cudaDeviceSynchronize();
    if (on_stream != cudaSuccess) {
      w.error = error_text(on_stream);
    } else if (on_device != cudaSuccess) {
      w.error = error_text(on_device) + " (in work outside the given stream)";
    }
    summarize(trace_->collect(), stream_done, w);
    w.dropped = trace_->dropped() - dropped_;
    dropped_ = trace_->dropped();
    return w;
  }

 private:
  // Fills w's figures from `acts`; `stream_done` is when the window's own stream had finished.
  void summarize(const std::vector<DeviceActivity>& acts, uint64_t stream_done,
                 kernels::DeviceWork& w) const {
    uint64_t first = std::numeric_limits<uint64_t>::max(), last = 0;
    std::vector<std::pair<uint64_t, uint64_t>> intervals;
    for (const auto& a : acts) {
      ++w.activities;
      if (w.names.size() < kernels::DeviceWork::kDeviceWorkNames) w.names.push_back(a.name.substr(0, 120));
      const bool timed = a.start_ns > 0 && a.end_ns >= a.start_ns;  // untimed: it had not finished when flushed
      if (timed) {
        first = std::min(first, a.start_ns);
        last = std::max(last, a.end_ns);
        intervals.emplace_back(a.start_ns, a.end_ns);
      }
      // Late: not finished when flushed, or work on another stream that ended after the
      // given stream had. Work on the given stream has ended by then by definition (its
      // synchronise returned); its end timestamp, converted from the GPU's clock, can
      // still read a microsecond after the host's, so it is not compared (an honest
      // kernel was once called late so on the H200).
      const bool off = a.stream_id != stream_id_, late = !timed || (off && a.end_ns > stream_done);
      w.off_stream += off;
      w.late += late;
      if ((off || late) && w.example.empty()) w.example = describe(a);
    }
    if (w.activities > 0 && last > first) w.span_s = static_cast<double>(last - first) * 1e-9;
    w.busy_s = static_cast<double>(union_length(intervals)) * 1e-9;
  }

  int device_;
  cudaStream_t stream_;
  std::unique_ptr<ActivityTrace> trace_;
  uint32_t stream_id_;
  int64_t dropped_ = 0;
};

}  // namespace

std::unique_ptr<kernels::DeviceTracer> cuda_tracer_create(int device, void* stream) {
  cudaSetDevice(device);
  return std::make_unique<CudaTracer>(device, static_cast<cudaStream_t>(stream), ActivityTrace::start());
}

}  // namespace fk::cuda
