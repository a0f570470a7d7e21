// The shared page between the supervisor and a candidate worker (kernels/candidate/worker.h).
//
// One memfd holds the whole arena: this control block at offset 0, tensor data after
// kChannelBytes. Both processes map it; the worker maps it before any candidate code
// loads. The supervisor writes a request, bumps `request_seq` and waits for
// `reply_seq` to reach it; the worker answers with a status code and a message.
//
// Invariant: nothing the worker writes here is trusted. The candidate can scribble over
// the whole page; the supervisor only reads the reply's code (FK_OK or not) and a
// bounded, sanitised message, and judges the candidate by the tensor data it reads
// back itself, with its own clock. A forged reply can cost the candidate, never help it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace fk::kernels::sandbox {

constexpr uint32_t kChannelMagic = 0x464b5733;  // "FKW3"
constexpr size_t kChannelArgs = 12;             // fused_moe: 8 tensors, selective_scan: 10
constexpr size_t kChannelDims = 8;
constexpr size_t kChannelMessage = 1024;
constexpr size_t kChannelBytes = size_t{1} << 16;  // tensor data starts here

// kPing answers at once and then keeps the worker spinning (not sleeping) for a while,
// so that a timed call sent right after finds it awake.
enum class RequestKind : uint32_t { kNone = 0, kHello = 1, kLoad = 2, kCall = 3, kQuit = 4, kPing = 5 };

// Worker-side reply codes beyond the ABI's FK_OK / FK_ERROR_* (kernels/fk_kernel.h).
constexpr int32_t kReplyLoadFailed = -1;   // dlopen, ABI version or entry symbol
constexpr int32_t kReplyBadRequest = -2;   // a descriptor outside the arena, unknown op
constexpr int32_t kReplyException = -3;    // a C++ exception escaped the call
constexpr int32_t kReplyDeviceFault = -4;  // a sticky device error (the message names it); the worker then exits
constexpr size_t kChannelHandle = 256;
constexpr size_t kChannelNote = 256;

struct ArgDesc {
  uint64_t offset = 0;  // from the start of the arena; 0 with defined == 0
  uint64_t bytes = 0;
  int32_t dtype = 0;    // core DType as an integer
  int32_t ndim = 0;
  int32_t defined = 0;
  int32_t reserved = 0;
  int64_t shape[kChannelDims] = {};
};

struct Channel {
  uint32_t magic = 0;
  uint32_t worker_pid = 0;  // written by the worker at start (informational)
  alignas(64) std::atomic<uint32_t> request_seq{0};
  alignas(64) std::atomic<uint32_t> reply_seq{0};
  alignas(64) std::atomic<uint32_t> worker_sleeping{0};      // worker waits on request_seq
  alignas(64) std::atomic<uint32_t> supervisor_sleeping{0};  // supervisor waits on reply_seq
  alignas(64) RequestKind kind = RequestKind::kNone;
  char op[64] = {};
  uint32_t nargs = 0, nparams = 0;
  ArgDesc args[kChannelArgs];
  double params[kChannelArgs] = {};
  int32_t reply_code = 0;
  char reply_message[kChannelMessage] = {};
  // Written by the supervisor before the worker starts: where tensor data lives. With
  // device_kind kCpu it follows this block in the memfd (offsets from its start); else
  // it is the device arena that device_handle names (offsets from the arena's start).
  int32_t device_kind = 0;  // core DeviceKind as an integer
  int32_t device_index = 0;
  uint64_t device_bytes = 0;
  uint32_t device_handle_bytes = 0;
  unsigned char device_handle[kChannelHandle] = {};
  // With each reply on a device: what the worker's DeviceTracer saw (kernels/backend.h).
  // Reported by the worker, so not trusted: see kernels/candidate/worker.h.
  int32_t work_traced = 0;
  uint64_t work_span_ns = 0;
  int64_t work_activities = 0, work_off_stream = 0, work_late = 0, work_dropped = 0;
  int64_t work_between = 0;  // activities that ran before the call, after the previous one returned
  char work_note[kChannelNote] = {};
  char work_audit[kChannelNote] = {};  // the device's audit after the call ("" when as the judge holds it)
};

static_assert(sizeof(Channel) <= kChannelBytes, "the control block must fit its page");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "cross-process atomics need lock-free words");

// Futex wait/wake on a word of the shared mapping (not FUTEX_PRIVATE: two processes).
// Waits while *word == expected, at most timeout_s (<= 0: no limit). Returns on wake,
// timeout or a changed word; callers re-check their condition.
void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, double timeout_s);
void futex_wake(std::atomic<uint32_t>* word);

}  // namespace fk::kernels::sandbox
