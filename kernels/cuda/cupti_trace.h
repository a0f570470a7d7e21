// A per-process CUPTI activity tracer: records every kernel, memcpy and memset the
// process runs on the device, on any stream, with CUPTI's start/end timestamps, so the
// candidate worker can see all the device work a call launched (not just the work on
// the stream it handed the candidate).
//
// libcupti is loaded at run time with dlopen (FK_CUPTI_LIBRARY, the path found at
// configure time, then "libcupti.so.13", then "libcupti.so"); it is never linked, so a
// build or a machine without CUPTI still runs until start() is called. cupti.h stays
// out of this header. There is at most one live ActivityTrace per process: CUPTI's
// activity buffers are process-global, so the tracer is a singleton handle on them.
// Records are delivered by CUPTI (on its own thread or inside collect()) and kept until
// collect() takes them; nothing is synchronized on the device by this class.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fk::cuda {

// One unit of device work as CUPTI recorded it.
struct DeviceActivity {
  enum class Kind { kKernel, kMemcpy, kMemset };
  Kind kind = Kind::kKernel;
  // CUPTI timestamps in ns (the clock of ActivityTrace::now_ns). Both are 0 when CUPTI
  // could not time the work (it had not finished when collect() flushed the buffers).
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  // CUPTI's stream id, unique within a context (compare with ActivityTrace::stream_id).
  uint32_t stream_id = 0;
  // The kernel's (mangled) name; "memcpy HtoD", "memcpy DtoD", ..., "memcpy PtoP";
  // "memset".
  std::string name;
};

class ActivityTrace {
 public:
  // Loads CUPTI and enables CONCURRENT_KERNEL (which does not serialize kernels),
  // MEMCPY, MEMCPY2 (peer-to-peer) and MEMSET activity for the whole process. Call it
  // after the CUDA context exists (cudaSetDevice + cudaFree(0)). Throws fk::Error
  // kRuntime naming the library and CUPTI's message when CUPTI cannot be loaded or
  // refuses, and kUnsupported while another ActivityTrace is alive. After the live one
  // is destroyed, start() may be called again.
  static std::unique_ptr<ActivityTrace> start();
  // Disables the activity kinds and flushes CUPTI; records not collected are dropped.
  // libcupti stays loaded (it owns threads), and CUPTI is not finalized.
  ~ActivityTrace();

  ActivityTrace(const ActivityTrace&) = delete;
  ActivityTrace& operator=(const ActivityTrace&) = delete;

  // The current CUPTI timestamp (cuptiGetTimestamp), in ns, on the clock of the
  // records. Thread-safe.
  uint64_t now_ns() const;
  // CUPTI's id of `cuda_stream`, a cudaStream_t of the current context; nullptr and
  // cudaStreamLegacy give the legacy default stream, cudaStreamPerThread the calling
  // thread's default stream. Throws fk::Error kRuntime if CUPTI does not know the stream.
  uint32_t stream_id(void* cuda_stream) const;
  // Forces CUPTI to hand back all its buffers (cuptiActivityFlushAll with
  // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) and returns every activity recorded since the
  // last collect(), sorted by start_ns, untimed ones last. Does not synchronize the
  // device: synchronize the work whose records are wanted first; records of work still
  // running come untimed or not at all. Throws fk::Error kRuntime if the flush fails.
  std::vector<DeviceActivity> collect();
  // Records CUPTI dropped since start() (no buffer space), as counted when buffers
  // were delivered and at each collect().
  int64_t dropped() const;

 private:
  ActivityTrace() = default;
};

}  // namespace fk::cuda
