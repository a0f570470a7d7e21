// Runtime: the one door through which model code runs ops, collectives and the data
// movement between them, on one backend (kernels/backend.h).
//
// It picks each op's implementation from an ImplSet (baseline or a candidate per op),
// checks every call against the op's shape rules, times it with the backend's timer
// (CUDA events enqueued around the call; the steady clock on the CPU), reports it to an
// EventSink (the model stage's trace) and to an InstanceRecorder (the op instances the
// kernel stage replays). Collectives go through it too and are timed as communication.
// Timings reach the sink at flush(): on the CPU each call has finished when it returns,
// on a device flush() waits for the marks. Model code allocates, zeroes, uploads,
// downloads and copies through it, so the same model code runs on every backend.
#pragma once

#include "collectives/communicator.h"
#include "kernels/backend.h"
#include "kernels/op.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fk::runner {

class ImplSet {
 public:
  // The baseline implementation ("cpu" or "cuda") of every registered op.
  static ImplSet baseline(DeviceKind device);
  void set(const std::string& op, const kernels::OpImpl* impl);
  const kernels::OpImpl& get(const std::string& op) const;
  // The baseline implementation of `op` (what a replaced op falls back to).
  const kernels::OpImpl& baseline(const std::string& op) const;
  // Ops whose implementation differs from the baseline, "op=impl" joined by ", ".
  std::string overrides() const;
  bool has_overrides() const;

 private:
  std::map<std::string, const kernels::OpImpl*> impls_;
  std::map<std::string, const kernels::OpImpl*> baselines_;
  std::map<std::string, std::string> baseline_names_;
};

enum class EventKind { kCompute, kComm };

struct OpEvent {
  std::string op;    // registry name, or the collective ("all_reduce")
  std::string role;  // place in the model: "attn.qkv_proj", "mlp.down_proj", "tp.attn_out"
  int64_t layer = -1;
  EventKind kind = EventKind::kCompute;
  double seconds = 0;
  double bytes = 0;  // payload of a collective
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const OpEvent& event) = 0;
};

struct InstanceRecord {
  std::string op;
  std::string role;
  kernels::OpShape shape;
  DType dtype = DType::kF32;  // dtype of the first float argument
  int64_t calls = 0;          // how often the model made this call in the measured step
  std::vector<int64_t> layers;
  bool measured = false;      // seen in the measured step (others: only in other steps)
};

// Collects distinct (op, role, shape, dtype) calls. Calls and layers are counted only
// while `measured` is set (the measured step); other steps add their new shapes.
class InstanceRecorder {
 public:
  void record(const std::string& op, const std::string& role, int64_t layer, const kernels::OpCall& call);
  void set_measured(bool measured) { measured_ = measured; }
  const std::vector<InstanceRecord>& instances() const { return instances_; }

 private:
  std::vector<InstanceRecord> instances_;
  std::map<std::string, size_t> index_;
  bool measured_ = true;
};

class Runtime {
 public:
  // `backend` outlives the Runtime; every tensor given to run() lives on it.
  Runtime(ImplSet impls, kernels::Backend& backend);

  void set_sink(EventSink* sink) { sink_ = sink; }
  void set_recorder(InstanceRecorder* recorder) { recorder_ = recorder; }
  void set_layer(int64_t layer) { layer_ = layer; }
  // Shape pass: every call is checked and recorded as usual, but no op runs (outputs
  // keep whatever they held) and no collective moves data (every rank of a group skips
  // the same calls). The op instances of a model too large to compute here then cost
  // only their bookkeeping; nothing is timed or reported to the sink.
  void set_shapes_only(bool shapes_only) { shapes_only_ = shapes_only; }
  // Untimed: ops and collectives run as usual but enqueue no timer marks and report
  // nothing to the sink (the work being captured as a graph, which is timed whole).
  void set_timed(bool timed) { timed_ = timed; }
  const ImplSet& impls() const { return impls_; }
  int64_t fallbacks() const { return fallbacks_; }
  kernels::Backend& backend() const { return backend_; }
  bool on_host() const { return backend_.kind() == DeviceKind::kCpu; }

  // --- memory on the backend (in the shape pass nothing is written or copied) ----------
  Tensor empty(DType dtype, const Shape& shape) const { return backend_.empty(dtype, shape); }
  // Zeros (on the CPU: fresh pages that take no memory until written).
  Tensor zeros(DType dtype, const Shape& shape) const;
  // `t` set to zeros (on the CPU: replaced by fresh zero pages).
  void zero(Tensor& t) const;
  // `t`'s elements set to zero where they are, on every backend: for a view (a block of
  // sequences of a state) whose storage the whole tensor shares. t must be contiguous.
  void zero_in_place(const Tensor& t) const;
  // A host tensor on the backend (on the CPU: `host` itself, not copied).
  Tensor upload(const Tensor& host) const;
  // `host` into `buffer` on the backend, reusing `buffer` when it already has host's
  // dtype and shape there, so that work captured once (Model::forward) reads what each
  // later call wrote. On the CPU `buffer` becomes `host` itself.
  void stage(Tensor& buffer, const Tensor& host) const;
  // A contiguous fp32 host copy of `t` (waits for the backend).
  Tensor host_f32(const Tensor& t) const;
  // dst <- src (Backend::copy_rows: matrices with contiguous rows at any row stride).
  void copy_rows(const Tensor& dst, const Tensor& src) const;
  // Waits for the backend's stream, then hands every timed call's time to the sink.
  void flush();

  // Checks and runs `op` on `call`; throws fk::Error naming op, role and problem. A
  // replaced op whose implementation does not support the call (its capability query,
  // or FK_ERROR_UNSUPPORTED) falls back to the baseline for that call, as a serving
  // engine would; fallbacks() counts them.
  void run(const std::string& op, const std::string& role, const kernels::OpCall& call);

  // Collectives on `comm` (nullptr or a single rank: nothing to do, nothing timed).
  void all_reduce(collectives::Communicator* comm, const Tensor& t, const std::string& role);
  // Gathers `t` from every rank into `out` (size() x t.numel() elements, rank blocks).
  void all_gather(collectives::Communicator* comm, const Tensor& t, const Tensor& out, const std::string& role);
  void send(collectives::Communicator* comm, const Tensor& t, int peer, int tag, const std::string& role);
  void recv(collectives::Communicator* comm, const Tensor& t, int peer, int tag, const std::string& role);
  void broadcast(collectives::Communicator* comm, const Tensor& t, int root, const std::string& role);

 private:
  struct Pending {
    OpEvent event;
    kernels::Timer* timer;
  };
  // A timer for the next call (from a pool reused after each flush()).
  kernels::Timer& next_timer();
  void record(const std::string& op, const std::string& role, EventKind kind, kernels::Timer& timer, double bytes);
  // Runs `move` (one collective call), timed as communication of `bytes` unless untimed.
  void communicate(const std::function<void()>& move, const char* op, const std::string& role, double bytes);

  ImplSet impls_;
  kernels::Backend& backend_;
  std::vector<std::unique_ptr<kernels::Timer>> timers_;
  std::vector<Pending> pending_;
  EventSink* sink_ = nullptr;
  InstanceRecorder* recorder_ = nullptr;
  int64_t layer_ = -1;
  int64_t fallbacks_ = 0;
  bool shapes_only_ = false;
  bool timed_ = true;
};

}  // namespace fk::runner
