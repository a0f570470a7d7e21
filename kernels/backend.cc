#include "kernels/backend.h"

#include "core/error.h"
#include "core/rng.h"

#include <fmt/format.h>

namespace fk::kernels {

std::string DeviceFacts::describe() const {
  std::string s = name;
  if (!arch.empty()) s += fmt::format(" ({})", arch);
  if (memory_bytes > 0) s += fmt::format(", {:.1f} GiB", static_cast<double>(memory_bytes) / double(1u << 30));
  if (sm_count > 0) s += fmt::format(", {} SMs", sm_count);
  if (cache_bytes > 0) s += fmt::format(", {:.0f} MiB last-level cache", static_cast<double>(cache_bytes) / double(1u << 20));
  if (max_sm_clock_mhz > 0) s += fmt::format(", max {} MHz", max_sm_clock_mhz);
  if (!driver.empty()) s += ", " + driver;
  return s;
}

std::string DeviceState::describe() const {
  if (!known()) return "not reported";
  std::string s;
  auto add = [&s](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (sm_clock_mhz >= 0) add(fmt::format("sm {} MHz", sm_clock_mhz));
  if (mem_clock_mhz >= 0) add(fmt::format("mem {} MHz", mem_clock_mhz));
  if (temperature_c >= 0) add(fmt::format("{} C", temperature_c));
  if (power_w >= 0) add(fmt::format("{:.1f} W", power_w));
  add(throttled ? fmt::format("throttled (reasons 0x{:x})", throttle_reasons) : "not throttled");
  return s;
}

void Backend::fill_uniform(const Tensor& t, int64_t offset, const UniformBlock& b) {
  if (!t.is_contiguous() || offset < 0 || b.rows < 0 || b.ncols < 0 || offset + b.numel() > t.numel())
    fail(ErrorKind::kInvalidArgument, "{} backend: fill_uniform: {} elements at {} do not fit {}", name(), b.numel(),
         offset, t.describe());
  if (b.numel() == 0) return;
  Tensor host = Tensor::empty(DType::kF32, {b.rows, b.ncols});
  rng_fill_uniform(RngStream(b.key), ShardBox{{b.row0 + b.rows, b.cols}, {b.row0, b.col0}, {b.rows, b.ncols}}, b.lo,
                   b.hi, host.span<float>());
  if (b.add != 0)
    for (float& v : host.span<float>()) v += b.add;
  upload(t.reshape({t.numel()}).slice(0, offset, b.numel()), host.to_dtype(t.dtype()));
}

Tensor Backend::to_device(const Tensor& host) {
  Tensor t = empty(host.dtype(), host.shape());
  upload(t, host);
  return t;
}

Tensor Backend::to_host(const Tensor& t) {
  if (t.device().kind == DeviceKind::kCpu) {
    synchronize();
    return t.contiguous_copy();
  }
  Tensor host = Tensor::empty(t.dtype(), t.shape());
  download(host, t);
  return host;
}

bool Backend::rows_copyable(const Tensor& t) {
  if (!t.defined()) return false;
  if (t.is_contiguous()) return true;
  return t.dim() == 2 && t.strides()[1] == 1 && t.strides()[0] >= t.size(1);
}

OpCall Backend::to_device(const OpCall& host_call) {
  OpCall c;
  c.params = host_call.params;
  c.args.reserve(host_call.args.size());
  for (const Tensor& t : host_call.args) c.args.push_back(t.defined() ? to_device(t) : Tensor());
  return c;
}

OpCall Backend::to_host(const OpCall& call) {
  OpCall c;
  c.params = call.params;
  c.args.reserve(call.args.size());
  for (const Tensor& t : call.args) c.args.push_back(t.defined() ? to_host(t) : Tensor());
  return c;
}

SharedMemory Backend::share_memory(size_t bytes) {
  fail(ErrorKind::kUnsupported, "backend {}: cannot share {} bytes of device memory with another process", name(),
       bytes);
}

void Backend::free_shared_memory(const SharedMemory&) {}

void* Backend::open_shared_memory(const std::string&, size_t) {
  fail(ErrorKind::kUnsupported, "backend {}: cannot map another process's device memory", name());
}

std::unique_ptr<DeviceTracer> Backend::tracer() { return nullptr; }

std::unique_ptr<Graph> Backend::capture(const std::function<void()>&) { return nullptr; }

void Backend::mark_pool(void*, size_t) {}

void Backend::use_pool_regions(void*, const std::vector<MemoryRange>&) {}

const OpImpl* Backend::baseline(const std::string& op) const {
  return OpRegistry::global().find_impl(op, std::string(device_kind_name(kind())));
}

bool Backend::supports_op(const OpDef& def, const OpCall& call) const {
  const OpImpl* impl = baseline(def.name);
  if (impl == nullptr) return false;
  return !impl->supports || impl->supports(call);
}

}  // namespace fk::kernels
