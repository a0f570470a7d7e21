// The supervisor's handle on one sandboxed worker process (fk-candidate-worker).
//
// A Worker forks and execs fk-candidate-worker in its own process group, with a
// scrubbed environment, a private scratch folder, its stdout/stderr in a log file there,
// and the arena memfd (kernels/candidate/channel.h) as fd 3. The worker enters the
// sandbox (kernels/candidate/sandbox.h) before it loads any candidate code. Candidate
// workers load one candidate library; baseline workers (no library) run the registry's
// CPU baseline, so candidate and baseline are timed through the same door.
//
// On a device (WorkerConfig::device, e.g. the CUDA backend) tensor data lives in a
// device arena instead: memory the supervisor allocates on its own backend and shares
// with the worker (Backend::share_memory, a CUDA IPC handle), so that the supervisor
// writes inputs and reads outputs itself, through its own context, as it does the
// memfd. The worker makes its backend of the same device, maps the arena and starts its
// DeviceTracer before it enters the sandbox; each call's reply then carries what the
// tracer saw (device time, work on other streams, work after return). The worker
// reports those figures, so the gates hold them against the supervisor's own clock
// (kernels/candidate/gates.h). A sticky device error ends the worker after its reply.
//
// Contract: the supervisor never maps candidate code. Every figure it reports is its
// own: call() times the call with the supervisor's steady clock, tensors are read from
// the arena by the supervisor, and the worker's CPU time comes from /proc, which the
// worker cannot write. A worker that dies, exits or exceeds the time limit is reaped
// (the whole process group is killed) and its end is described by failure(); it
// answers no further call.
#pragma once

#include "core/tensor.h"
#include "kernels/backend.h"
#include "kernels/candidate/sanitizer.h"
#include "kernels/op.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fk::kernels {

struct WorkerConfig {
  std::string executable;       // fk-candidate-worker (worker_executable_path())
  std::string library;          // the candidate's shared object; empty: a baseline worker
  std::string name, op, entry;  // the candidate's manifest name, op and entry symbol
  int threads = 1;
  double time_limit_s = 60;     // per load or call
  std::function<void()> on_wait;  // called about once a second while waiting (heartbeats)
  // The device tensors live on: nullptr or a CPU backend for the host arena; else the
  // supervisor's backend of that device (it must outlive the worker).
  Backend* device = nullptr;
  // Size of the device arena; 0: min(8 GiB, an eighth of the device's memory). The gates
  // say when an instance needs more (InstanceGate::arena_bytes_needed).
  size_t device_arena_bytes = 0;
  // compute-sanitizer's path (kernels/candidate/sanitizer.h): the worker runs under it,
  // with `sanitizer_tool`, its log in a folder of the supervisor's ("" : no sanitizer).
  std::string sanitizer;
  std::string sanitizer_tool = "memcheck";
};

struct WorkerReply {
  int code = 0;         // FK_OK, FK_ERROR_*, or sandbox::kReply*
  std::string message;  // sanitised, at most 1 KB
  double seconds = 0;   // the supervisor's clock, request to reply
  // Device workers: what the worker's tracer saw (reported by the worker).
  bool traced = false;
  DeviceWork work;      // of the call
  int64_t between = 0;  // activities that ran after the previous reply and before this call
  std::string audit;    // the worker's Backend::audit() after the call ("" when clean)
};

// kDeviceFault: it answered with a sticky device error and was ended (its context is lost).
enum class WorkerEnd { kRunning, kExited, kSignaled, kTimedOut, kLost, kDeviceFault };

// CPU time of a worker, two ways: the sum over its live threads (ns precision, loses
// threads that ended) and the process total (clock ticks, keeps them).
struct WorkerCpu {
  double live_threads_s = 0, process_s = 0;
  double main_thread_s = 0;  // of the thread that serves the requests (the worker's first)
  int threads = 0;
  // CPU seconds used between two readings (the larger of the two measures).
  static double used(const WorkerCpu& before, const WorkerCpu& after);
  // Of those, the seconds of every thread but the serving one: threads the candidate
  // started (and, on a device, its driver's). Exact for threads alive at both readings;
  // threads that ended between them are seen only beyond the process time's rounding.
  static double used_off_main(const WorkerCpu& before, const WorkerCpu& after);
};

class Worker {
 public:
  // Starts the worker; throws fk::Error (kRuntime) when it cannot be started.
  explicit Worker(WorkerConfig config);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  const WorkerConfig& config() const { return config_; }
  bool alive() const { return end_ == WorkerEnd::kRunning; }
  WorkerEnd end() const { return end_; }
  int exit_code() const { return exit_code_; }
  int signal() const { return signal_; }
  // How it ended, e.g. "killed by SIGSEGV", "exited with status 0 without answering",
  // "exceeded the time limit of 5 s", plus the tail of its log.
  std::string failure() const;
  // The sandbox layers the worker reported on its first line ("seccomp, landlock v7, ...").
  const std::string& sandbox() const { return sandbox_; }

  // Loads the library (a no-op reply for a baseline worker). nullopt: the worker ended.
  std::optional<WorkerReply> load();
  // Wakes the worker and keeps it spinning (up to 50 ms) for the next request, so that a
  // timed call does not include its wake-up. nullopt: the worker ended.
  std::optional<WorkerReply> ping();
  // Runs `op` on `call`; every defined tensor must lie in this worker's arena.
  std::optional<WorkerReply> call(const std::string& op, const OpCall& call);

  // Arena tensors (64-byte aligned; a host arena is zero-filled once). reset_arena()
  // frees them all. On a device arena the pointers are device pointers: read and write
  // them only through the calls below.
  Tensor alloc(DType dtype, Shape shape);
  unsigned char* alloc_bytes(size_t bytes);
  // A contiguous copy of `call` in the arena (undefined tensors stay undefined). Its
  // tensors are on the host or, for a device arena, on the arena's device.
  OpCall copy_in(const OpCall& call);
  void reset_arena();
  bool in_arena(const void* p, size_t bytes) const;
  bool on_device() const { return device_base_ != nullptr; }
  // Bytes the arena can hold in all (before alignment and guards).
  size_t arena_capacity() const;
  Device device() const;

  // The supervisor's access to arena memory: memcpy on a host arena, the backend's
  // upload and download on a device arena (each returns when the copy is done).
  // dst: an arena tensor of src's bytes; src on the host, or on a device arena's device
  // (then copied device to device, rows contiguous: Backend::copy_rows).
  void write(const Tensor& dst, const Tensor& src);
  Tensor read(const Tensor& src) const;               // a contiguous host copy
  // dst (on a device arena's device, rows contiguous) <- arena tensor src, device to device.
  void read_into(const Tensor& dst, const Tensor& src) const;
  void write_bytes(void* dst, const void* src, size_t bytes);
  void read_bytes(void* dst, const void* src, size_t bytes) const;
  void set_bytes(void* dst, uint8_t byte, size_t bytes);

  // CPU time of the worker so far (/proc/<pid>/task/*/schedstat and /proc/<pid>/stat).
  // Under a sanitizer the pid is the worker's own, the sanitizer's child, not the
  // sanitizer's.
  WorkerCpu cpu() const;
  // Under a sanitizer: the findings in its log not returned before (once the worker has
  // ended, also a last record that was still open). Empty without a sanitizer.
  std::vector<SanitizerFinding> sanitizer_findings();
  bool sanitized() const { return !config_.sanitizer.empty(); }
  // Kills the worker's process group and reaps it (idempotent).
  void kill();

 private:
  void spawn();
  std::optional<WorkerReply> request(const std::string& what);
  void reap(bool block);
  std::string log_tail(const std::string& path, size_t bytes) const;

  WorkerConfig config_;
  int memfd_ = -1;
  unsigned char* base_ = nullptr;
  size_t size_ = 0, used_ = 0;
  SharedMemory device_arena_;
  unsigned char* device_base_ = nullptr;  // device arena (nullptr: tensors in the memfd)
  int pid_ = -1;
  std::string scratch_, log_, sandbox_, doing_, device_fault_;
  std::string sanitizer_dir_, sanitizer_log_;  // not writable by the worker
  size_t findings_seen_ = 0;
  int cpu_pid_ = -1;  // whose /proc cpu() reads: pid_, or under a sanitizer its child the worker
  WorkerEnd end_ = WorkerEnd::kRunning;
  int exit_code_ = -1, signal_ = 0;
  uint32_t seq_ = 0;
};

// $FK_CANDIDATE_WORKER, else fk-candidate-worker beside the running executable (or in
// ../runner/), else this build tree's, else on PATH.
std::string worker_executable_path();

// A model-stage implementation of `op` that runs each call in `worker`: arguments are
// copied into its arena, outputs copied back. On FK_ERROR_UNSUPPORTED it throws
// kUnsupported (the runtime falls back to the baseline for that call). Any other
// failure (the worker died, timed out, returned an error) is recorded once in
// `failure` and every later call runs `fallback` instead, so that every rank keeps
// the same sequence of collectives.
struct RemoteFailure {
  std::string verdict;  // "" while healthy; else CRASHED, TIMEOUT, RUNTIME_ERROR, REWARD_HACK
  std::string reason;
};
// `model` is the backend the model's tensors live on (nullptr: the host): device tensors
// move device to device into a device arena, or through host copies into a host one.
OpImpl worker_op_impl(std::shared_ptr<Worker> worker, const OpImpl& fallback, std::shared_ptr<RemoteFailure> failure,
                      Backend* model = nullptr);

// The verdict name and reason for a worker that ended during `what`.
RemoteFailure worker_failure_verdict(const Worker& worker, const std::string& what);

}  // namespace fk::kernels
