#include "runner/runtime.h"

#include "core/error.h"
#include "runner/heartbeat.h"
#include "runner/test_seams.h"

#include <chrono>
#include <cstring>
#include <fmt/format.h>

namespace fk::runner {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

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

Runtime::Runtime(ImplSet impls) : impls_(std::move(impls)) {}

void Runtime::emit(const std::string& op, const std::string& role, EventKind kind, double seconds, double bytes) {
  progress_tick();
  if (sink_ != nullptr) sink_->on_event({op, role, layer_, kind, seconds, bytes});
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
  const auto t0 = std::chrono::steady_clock::now();
  try {
    impl->run(call);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUnsupported || impl == &impls_.baseline(op)) throw;
    ++fallbacks_;
    impls_.baseline(op).run(call);
  }
  seam_stretch(t0);  // test seam (test_seams.h)
  emit(op, role, EventKind::kCompute, seconds_since(t0), def.bytes ? def.bytes(call) : 0);
}

void Runtime::all_reduce(collectives::Communicator* comm, const Tensor& t, const std::string& role) {
  if (!active(comm) || shapes_only_) return;
  const auto t0 = std::chrono::steady_clock::now();
  comm->all_reduce(t.data(), t.data(), static_cast<size_t>(t.numel()), t.dtype(), collectives::ReduceOp::kSum);
  emit("all_reduce", role, EventKind::kComm, seconds_since(t0), static_cast<double>(t.nbytes()));
}

void Runtime::all_gather(collectives::Communicator* comm, const Tensor& t, const Tensor& out, const std::string& role) {
  if (shapes_only_) return;
  if (!active(comm)) {
    if (out.data() != t.data()) std::memcpy(out.data(), t.data(), t.nbytes());
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  comm->all_gather(t.data(), out.data(), static_cast<size_t>(t.numel()), t.dtype());
  emit("all_gather", role, EventKind::kComm, seconds_since(t0), static_cast<double>(out.nbytes()));
}

void Runtime::send(collectives::Communicator* comm, const Tensor& t, int peer, int tag, const std::string& role) {
  if (!active(comm) || shapes_only_) return;
  const auto t0 = std::chrono::steady_clock::now();
  comm->send(t.data(), static_cast<size_t>(t.numel()), t.dtype(), peer, tag);
  emit("send", role, EventKind::kComm, seconds_since(t0), static_cast<double>(t.nbytes()));
}

void Runtime::recv(collectives::Communicator* comm, const Tensor& t, int peer, int tag, const std::string& role) {
  if (!active(comm) || shapes_only_) return;
  const auto t0 = std::chrono::steady_clock::now();
  comm->recv(t.data(), static_cast<size_t>(t.numel()), t.dtype(), peer, tag);
  emit("recv", role, EventKind::kComm, seconds_since(t0), static_cast<double>(t.nbytes()));
}

void Runtime::broadcast(collectives::Communicator* comm, const Tensor& t, int root, const std::string& role) {
  if (!active(comm) || shapes_only_) return;
  const auto t0 = std::chrono::steady_clock::now();
  comm->broadcast(t.data(), static_cast<size_t>(t.numel()), t.dtype(), root);
  emit("broadcast", role, EventKind::kComm, seconds_since(t0), static_cast<double>(t.nbytes()));
}

}  // namespace fk::runner
