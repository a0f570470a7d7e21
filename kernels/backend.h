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
#include <memory>
#include <string>

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
  // Every byte of t set to `byte`; enqueued.
  virtual void memset(const Tensor& t, uint8_t byte) = 0;
  // Every element of t (a float tensor) set to `value` rounded to t's dtype; enqueued.
  virtual void fill(const Tensor& t, double value) = 0;

  // Helpers over the calls above.
  Tensor to_device(const Tensor& host);   // a copy of host on this device
  Tensor to_host(const Tensor& t);        // a contiguous CPU copy (waits)
  // A copy of every defined tensor of `call` on this device (params copied).
  OpCall to_device(const OpCall& host_call);

  // --- ordering and timing -------------------------------------------------------------
  virtual void* stream() const = 0;  // cudaStream_t; nullptr on the CPU
  virtual void synchronize() = 0;
  virtual std::unique_ptr<Timer> timer() = 0;
  // Evicts the last-level cache (facts().cache_bytes) with enqueued writes of a buffer
  // larger than it, so that the next call reads its inputs from memory.
  virtual void flush_cache() = 0;
  // "" when the device is in the state the judge requires between timed calls (CUDA:
  // the persisting-L2 limit is 0 and no sticky error is pending), else what is wrong.
  virtual std::string audit() = 0;

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
