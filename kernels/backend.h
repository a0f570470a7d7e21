// Backend: one object per device that every stage runs on (ggml-backend style).
//
// A job chooses its backend once, from its `backend` (DeviceKind) and the node-local
// rank (one GPU per rank), and hands that object to every stage: the model stage, the
// kernel stage, the candidate gates, `fk forward` and `fk check`. Nothing else picks a
// device, an allocator, a stream or a clock.
//
// What a backend provides:
//   memory      tensors on its device (CUDA: a caching allocator), copies to and from
//               host tensors, device copies, memset and fill;
//   ordering    one stream; every call below that takes a tensor enqueues on it, and
//               synchronize() waits for all of it (CPU: everything is done on return);
//   timing      a Timer whose marks are enqueued on the stream (CUDA events; CPU:
//               steady clock), a cache flush, and device state (clocks, temperature,
//               power, throttle reasons) where the device reports it;
//   graphs      (optional) device work captured once and replayed (CUDA graphs);
//   ops         the baseline implementation of each op on this device and the
//               capability query supports_op(), beside that op table;
//   collectives a communicator over a group of ranks (CPU: MPI; CUDA: NCCL on this
//               backend's stream).
// Adding a backend is one folder under kernels/ that implements this class plus one
// line in kernels/backends.cc.
#pragma once

#include "core/device.h"
#include "core/tensor.h"
#include "kernels/op.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fk::collectives {
class Communicator;
}

namespace fk::kernels {

// What a device is; constant for a backend's life.
struct DeviceFacts {
  std::string name;           // "NVIDIA H200", "cpu (16 threads)"
  std::string arch;           // "sm_90", "x86_64"
  int64_t memory_bytes = 0;   // device memory (CPU: physical memory)
  int64_t cache_bytes = 0;    // last-level cache the timing must defeat (CUDA: L2)
  int sm_count = 0;           // 0 on the CPU
  int max_sm_clock_mhz = 0;   // 0 where unknown
  int max_mem_clock_mhz = 0;
  std::string driver;         // driver / runtime versions ("cuda 13.0, driver 580.65")
  std::string pci_bus_id;     // "0000:19:00.0" (empty on the CPU)
  std::string describe() const;  // one line for logs and job files
};

// What a device is doing now; fields the device does not report stay negative.
struct DeviceState {
  int sm_clock_mhz = -1;
  int mem_clock_mhz = -1;
  int temperature_c = -1;
  double power_w = -1;
  uint64_t throttle_reasons = 0;  // NVML clocks-event reason bits
  bool throttled = false;         // a power or thermal slowdown is active
  bool known() const { return sm_clock_mhz >= 0 || temperature_c >= 0; }
  std::string describe() const;   // "sm 1980 MHz, mem 3201 MHz, 41 C, 118.0 W" or "not reported"
};

// One timed interval on a backend's stream: start() and stop() enqueue marks;
// seconds() waits for the stop mark and returns the time between the two.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double seconds() = 0;
};

// Memory that another process maps: the candidate worker's arena
// (kernels/candidate/worker.h). `handle` names it to that process.
struct SharedMemory {
  void* data = nullptr;
  size_t bytes = 0;
  std::string handle;  // opaque bytes
};

// A range of memory in use inside a pool (Backend::use_pool_regions).
struct MemoryRange {
  const void* data = nullptr;
  size_t bytes = 0;
};

// A block of a global [rows x cols] random tensor (core/rng.h): rows [row0, row0 + rows)
// x columns [col0, col0 + ncols), each element RngStream(key).uniform(global index, lo,
// hi), plus `add` when it is not 0 (in fp32, after the draw; Gemma's folded norm offset).
struct UniformBlock {
  uint64_t key = 0;  // RngStream::key()
  int64_t cols = 0;  // the global tensor's row length
  int64_t row0 = 0, rows = 0, col0 = 0, ncols = 0;
  float lo = 0, hi = 1;
  float add = 0;
  int64_t numel() const { return rows * ncols; }
};

// What a DeviceTracer saw of the device work in one window, on every stream of the
// process. Figures are 0 where there was no such work.
struct DeviceWork {
  double span_s = 0;        // first start to last end of the work (kernels, copies, memsets)
  // The time the device was busy with it: the union of the work's intervals, so the gaps
  // between one launch's end and the next one's start are left out. Those gaps are
  // host time (a launch not yet made), which a tracer itself lengthens; span_s keeps
  // them, and is what the judge charges (host work between launches is the caller's).
  double busy_s = 0;
  int64_t activities = 0;   // how many there were
  int64_t off_stream = 0;   // of them, on a stream other than the backend's
  int64_t late = 0;         // of them, still running after the backend's stream had finished
  int64_t dropped = 0;      // records the tracer lost (the window is then not fully seen)
  std::string example;      // the first off-stream or late one ("kernel rms_norm_kernel on stream 13")
  std::string error;        // the device fault the window ended with, "" when none
  // The first kDeviceWorkNames activities' names in the order recorded (kernels as the
  // tracer names them, at most 120 characters; "memcpy DtoD", "memset"): for benchmarks.
  static constexpr size_t kDeviceWorkNames = 8;
  std::vector<std::string> names;
};

// Sees all device work of this process, on any stream, in windows. Used by the
// candidate worker around each call; one per process.
class DeviceTracer {
 public:
  virtual ~DeviceTracer() = default;
  // Opens a window. Returns the work that ran since the last window closed: work that
  // was launched after a call had returned.
  virtual DeviceWork begin() = 0;
  // Closes the window: waits for the backend's stream, then for the whole device, and
  // reports the window's work. A device fault is reported in `error`, not thrown.
  virtual DeviceWork end() = 0;
};

// Device work recorded once and replayed as one launch (CUDA graphs). The memory the
// captured work allocated stays reserved for it until the graph is destroyed, so a
// replay's scratch never aliases a tensor made outside it.
class Graph {
 public:
  virtual ~Graph() = default;
  // Enqueues the captured work on the backend's stream (returns before it has run).
  virtual void replay() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual DeviceKind kind() const = 0;
  virtual Device device() const = 0;
  std::string name() const { return device_name(device()); }  // "cpu", "cuda:0"
  virtual const DeviceFacts& facts() const = 0;
  virtual DeviceState state() = 0;

  // Makes this backend current on the calling thread (CUDA: its device, and its stream
  // for the baselines). Every entry point below does it too; a thread that runs ops
  // through OpImpl::run directly calls it first.
  virtual void activate() = 0;

  // --- memory ------------------------------------------------------------------------
  // A contiguous tensor on this device; contents unspecified. Out of memory throws
  // fk::Error(kRuntime) naming the size and what the device has.
  virtual Tensor empty(DType dtype, const Shape& shape) = 0;
  // dst (this device) <- host; dst is contiguous and holds host's bytes. Host may be
  // strided. Returns when the host memory may be reused.
  virtual void upload(const Tensor& dst, const Tensor& host) = 0;
  // host <- src (this device): waits for the stream, then copies; host contiguous.
  virtual void download(const Tensor& host, const Tensor& src) = 0;
  // dst <- src, both on this device, contiguous, same bytes; enqueued.
  virtual void copy(const Tensor& dst, const Tensor& src) = 0;
  // dst <- src, both on this device, of one shape and dtype: each a matrix whose rows are
  // contiguous (stride 1 in the last dimension) at any row stride (a column block of a
  // wider matrix, every q_len-th row), or a contiguous tensor of any rank; enqueued.
  // Anything else throws fk::Error(kInvalidArgument) naming both tensors.
  virtual void copy_rows(const Tensor& dst, const Tensor& src) = 0;
  // Every byte of t set to `byte`; enqueued.
  virtual void memset(const Tensor& t, uint8_t byte) = 0;
  // Every element of t (a float tensor) set to `value` rounded to t's dtype; enqueued.
  virtual void fill(const Tensor& t, double value) = 0;
  // Elements [offset, offset + block.numel()) of contiguous float tensor t, in the
  // block's row-major order, set to the block's values rounded once to t's dtype:
  // bit-identical on every backend (the values of rng_fill_uniform). Enqueued. The
  // default draws on the host and uploads; a device draws in place (CUDA).
  virtual void fill_uniform(const Tensor& t, int64_t offset, const UniformBlock& block);

  // Helpers over the calls above.
  Tensor to_device(const Tensor& host);   // a copy of host on this device
  Tensor to_host(const Tensor& t);        // a contiguous CPU copy (waits)
  // Whether copy_rows() takes `t`: contiguous, or a matrix with contiguous rows.
  static bool rows_copyable(const Tensor& t);
  // A copy of every defined tensor of `call` on this device (params copied).
  OpCall to_device(const OpCall& host_call);
  // A contiguous host copy of every defined tensor of `call` (waits; params copied).
  OpCall to_host(const OpCall& call);

  // --- ordering and timing -------------------------------------------------------------
  virtual void* stream() const = 0;  // cudaStream_t; nullptr on the CPU
  virtual void synchronize() = 0;
  virtual std::unique_ptr<Timer> timer() = 0;
  // Records the device work `work` enqueues on this backend's stream, without running
  // it, as a Graph. nullptr where the device has no graphs (the default; the CPU).
  // Work that cannot be recorded (it waits for the stream or the device, copies to or
  // from pageable host memory, uses another stream) throws fk::Error(kUnsupported)
  // naming the reason; nothing of it ran and the backend is usable.
  virtual std::unique_ptr<Graph> capture(const std::function<void()>& work);
  // Evicts the last-level cache (facts().cache_bytes) with enqueued writes of a buffer
  // larger than it, so that the next call reads its inputs from memory.
  virtual void flush_cache() = 0;
  // "" when the device is in the state the judge requires between timed calls (CUDA:
  // the persisting-L2 limit is 0 and no sticky error is pending), else what is wrong.
  virtual std::string audit() = 0;

  // --- memory another process maps, and tracing (optional) --------------------------
  // An allocation of `bytes` on this device that another process maps with
  // open_shared_memory(handle) on its own backend of the same device (CUDA: an IPC
  // handle). Throws fk::Error(kUnsupported) where the device cannot share memory.
  virtual SharedMemory share_memory(size_t bytes);
  // Frees memory from share_memory() once no other process uses it.
  virtual void free_shared_memory(const SharedMemory& memory);
  // In the other process: maps the memory `handle` names (`bytes` long); it stays mapped
  // for the process's life. Throws fk::Error naming why not.
  virtual void* open_shared_memory(const std::string& handle, size_t bytes);
  // The tracer of this process's device work, or nullptr where the backend cannot see
  // it (the CPU: every call is done when it returns). Throws fk::Error when the device
  // has a tracer that cannot start (CUDA: CUPTI missing or refused).
  virtual std::unique_ptr<DeviceTracer> tracer();
  // For memory checkers (CUDA: compute-sanitizer, through NVTX's memory API): the
  // memory at `base` (`bytes` long, e.g. a mapped shared arena) is a pool of
  // sub-allocations, of which only the ranges last given to use_pool_regions() are in
  // use; a checker then reports an access anywhere else in the pool, as it does one
  // outside every allocation. No-ops where no checker listens (and on the CPU).
  virtual void mark_pool(void* base, size_t bytes);
  virtual void use_pool_regions(void* base, const std::vector<MemoryRange>& regions);

  // --- ops -----------------------------------------------------------------------------
  // The baseline implementation of `op` on this device, or nullptr when it has none.
  const OpImpl* baseline(const std::string& op) const;
  // Whether this device's baseline of def.name exists and accepts `call` (dtypes,
  // shapes, contiguity); the caller probes instead of failing.
  bool supports_op(const OpDef& def, const OpCall& call) const;

  // --- collectives ---------------------------------------------------------------------
  // A communicator over the ranks of `group` (a host-memory MPI communicator) for
  // buffers on this device. Collective over `group`.
  virtual std::unique_ptr<collectives::Communicator> communicator(collectives::Communicator& group) = 0;
};

// Throttle bits of NVML's clocks-event reasons that mean the clocks were held down by
// power or temperature (SW power cap, HW slowdown, SW/HW thermal, power brake).
constexpr uint64_t kThrottleSlowdownMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

}  // namespace fk::kernels
