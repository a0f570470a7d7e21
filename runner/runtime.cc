#include "runner/runtime.h"

#include "core/error.h"
#include "runner/heartbeat.h"
#include "runner/test_seams.h"

#include <chrono>
#include <cstring>
#include <fmt/format.h>

namespace fk::runner {
namespace {

bool active(const collectives::Communicator* comm) { return comm != nullptr && comm->size() > 1; }

}  // namespace

ImplSet ImplSet::baseline(DeviceKind device) {
  kernels::register_builtin_ops();
  ImplSet s;
  const std::string name(device_kind_name(device));
  for (const auto& op : kernels::OpRegistry::global().op_names()) {
    s.impls_[op] = &kernels::OpRegistry::global().impl(op, name);
    s.baselines_[op] = s.impls_[op];
    s.baseline_names_[op] = name;
  }
  return s;
}

void ImplSet::set(const std::string& op, const kernels::OpImpl* impl) { impls_[op] = impl; }

const kernels::OpImpl& ImplSet::get(const std::string& op) const {
  auto it = impls_.find(op);
  if (it == impls_.end() || it->second == nullptr) fail(ErrorKind::kNotFound, "no implementation selected for op '{}'", op);
  return *it->second;
}

const kernels::OpImpl& ImplSet::baseline(const std::string& op) const {
  auto it = baselines_.find(op);
  if (it == baselines_.end()) fail(ErrorKind::kNotFound, "no baseline implementation for op '{}'", op);
  return *it->second;
}

bool ImplSet::has_overrides() const { return !overrides().empty(); }

std::string ImplSet::overrides() const {
  std::string out;
  for (const auto& [op, impl] : impls_) {
    auto b = baseline_names_.find(op);
    if (b != baseline_names_.end() && impl->name == b->second) continue;
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", op, impl->name);
  }
  return out;
}

void InstanceRecorder::record(const std::string& op, const std::string& role, int64_t layer, const kernels::OpCall& call) {
  const kernels::OpDef& def = kernels::OpRegistry::global().def(op);
  kernels::OpShape shape = def.shape_of(call);
  DType dtype = DType::kF32;
  for (size_t i = 0; i < call.args.size(); ++i)
    if (def.args[i].float_typed && !def.args[i].own_dtype && call.args[i].defined()) {
      dtype = call.args[i].dtype();
      break;
    }
  std::string key = fmt::format("{}|{}|{}", op, role, dtype_name(dtype));
  for (const auto& [k, v] : shape.dims) key += fmt::format("|{}={}", k, v);
  for (double p : shape.params) key += fmt::format("|{}", p);
  auto it = index_.find(key);
  if (it == index_.end()) {
    index_[key] = instances_.size();
    instances_.push_back({op, role, std::move(shape), dtype, 0, {}});
    it = index_.find(key);
  }
  InstanceRecord& r = instances_[it->second];
  if (!measured_) return;
  r.measured = true;
  ++r.calls;
  if (layer >= 0 && (r.layers.empty() || r.layers.back() != layer)) r.layers.push_back(layer);
}

Runtime::Runtime(ImplSet impls, kernels::Backend& backend) : impls_(std::move(impls)), backend_(backend) {}

Tensor Runtime::zeros(DType dtype, const Shape& shape) const {
  if (on_host()) return Tensor::zeros(dtype, shape);
  Tensor t = backend_.empty(dtype, shape);
  if (!shapes_only_) backend_.memset(t, 0);
  return t;
}

void Runtime::zero(Tensor& t) const {
  if (on_host()) {
    t = Tensor::zeros(t.dtype(), t.shape());
  } else if (!shapes_only_) {
    backend_.memset(t, 0);
  }
}

void Runtime::zero_in_place(const Tensor& t) const {
  if (!shapes_only_) backend_.memset(t, 0);
}

Tensor Runtime::upload(const Tensor& host) const {
  if (on_host() || host.device() == backend_.device()) return host;
  Tensor t = backend_.empty(host.dtype(), host.shape());
  if (!shapes_only_) backend_.upload(t, host);
  return t;
}

void Runtime::stage(Tensor& buffer, const Tensor& host) const {
  if (on_host()) {
    buffer = host;
    return;
  }
  if (!buffer.defined() || buffer.dtype() != host.dtype() || buffer.shape() != host.shape() ||
      buffer.device() != backend_.device())
    buffer = backend_.empty(host.dtype(), host.shape());
  if (!shapes_only_) backend_.upload(buffer, host);
}

Tensor Runtime::host_f32(const Tensor& t) const {
  if (t.device().kind == DeviceKind::kCpu) return t.to_dtype(DType::kF32);
  const Tensor host = backend_.to_host(t);
  return host.dtype() == DType::kF32 ? host : host.to_dtype(DType::kF32);
}

void Runtime::copy_rows(const Tensor& dst, const Tensor& src) const {
  if (!shapes_only_) backend_.copy_rows(dst, src);
}

kernels::Timer& Runtime::next_timer() {
  // A step of a large model makes thousands of calls; past this many the marks are
  // read now rather than kept.
  constexpr size_t kMaxPending = 8192;
  if (pending_.size() >= kMaxPending) flush();
  if (pending_.size() == timers_.size()) timers_.push_back(backend_.timer());
  return *timers_[pending_.size()];
}

void Runtime::record(const std::string& op, const std::string& role, EventKind kind, kernels::Timer& timer,
                     double bytes) {
  progress_tick();
  pending_.push_back({OpEvent{op, role, layer_, kind, 0, bytes}, &timer});
}

void Runtime::flush() {
  if (!shapes_only_) backend_.synchronize();
  for (Pending& p : pending_) {
    p.event.seconds = p.timer->seconds();
    if (sink_ != nullptr) sink_->on_event(p.event);
  }
  pending_.clear();
}

void Runtime::run(const std::string& op, const std::string& role, const kernels::OpCall& call) {
  const kernels::OpDef& def = kernels::OpRegistry::global().def(op);
  if (call.args.size() != def.args.size() || call.params.size() != def.params.size())
    fail(ErrorKind::kInternal, "{} ({}): called with {} tensors and {} parameters, expected {} and {}", op, role,
         call.args.size(), call.params.size(), def.args.size(), def.params.size());
  if (const std::string problem = def.check(call); !problem.empty())
    fail(ErrorKind::kInvalidArgument, "{} ({}, layer {}): {}", op, role, layer_, problem);
  const kernels::OpImpl* impl = &impls_.get(op);
  if (impl->supports && !impl->supports(call)) {
    impl = &impls_.baseline(op);
    ++fallbacks_;
  }
  if (recorder_ != nullptr) recorder_->record(op, role, layer_, call);
  if (shapes_only_) {
    progress_tick();
    return;
  }
  kernels::Timer* timer = timed_ ? &next_timer() : nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  if (timer != nullptr) timer->start();
  try {
    impl->run(call);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnsupported || impl == &impls_.baseline(op)) throw;
    ++fallbacks_;
    impls_.baseline(op).run(call);
  }
  seam_stretch(t0);  // test seam (test_seams.h)
  if (timer == nullptr) {
    progress_tick();
    return;
  }
  timer->stop();
  record(op, role, EventKind::kCompute, *timer, def.bytes ? def.bytes(call) : 0);
}

void Runtime::communicate(const std::function<void()>& move, const char* op, const std::string& role,
                          double bytes) {
  if (!timed_) {
    move();
    return;
  }
  kernels::Timer& timer = next_timer();
  timer.start();
  move();
  timer.stop();
  record(op, role, EventKind::kComm, timer, bytes);
}

void Runtime::all_reduce(collectives::Communicator* comm, const Tensor& t, const std::string& role) {
  if (!active(comm) || shapes_only_) return;
  communicate(
      [&] {
        comm->all_reduce(t.data(), t.data(), static_cast<size_t>(t.numel()), t.dtype(), collectives::ReduceOp::kSum);
      },
      "all_reduce", role, static_cast<double>(t.nbytes()));
}

void Runtime::all_gather(collectives::Communicator* comm, const Tensor& t, const Tensor& out, const std::string& role) {
  if (shapes_only_) return;
  if (!active(comm)) {
    // One rank: its block is the first (of one, or of a layout run without its group).
    if (out.data() != t.data()) backend_.copy(out.reshape({out.numel()}).slice(0, 0, t.numel()), t);
    return;
  }
  communicate([&] { comm->all_gather(t.data(), out.data(), static_cast<size_t>(t.numel()), t.dtype()); },
              "all_gather", role, static_cast<double>(out.nbytes()));
}

void Runtime::send(collectives::Communicator* comm, const Tensor& t, int peer, int tag, const std::string& role) {
  if (!active(comm) || shapes_only_) return;
  communicate([&] { comm->send(t.data(), static_cast<size_t>(t.numel()), t.dtype(), peer, tag); }, "send", role,
              static_cast<double>(t.nbytes()));
}

void Runtime::recv(collectives::Communicator* comm, const Tensor& t, int peer, int tag, const std::string& role) {
  if (!active(comm) || shapes_only_) return;
  communicate([&] { comm->recv(t.data(), static_cast<size_t>(t.numel()), t.dtype(), peer, tag); }, "recv", role,
              static_cast<double>(t.nbytes()));
}

void Runtime::broadcast(collectives::Communicator* comm, const Tensor& t, int root, const std::string& role) {
  if (!active(comm) || shapes_only_) return;
  communicate([&] { comm->broadcast(t.data(), static_cast<size_t>(t.numel()), t.dtype(), root); }, "broadcast", role,
              static_cast<double>(t.nbytes()));
}

}  // namespace fk::runner
