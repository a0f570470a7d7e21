// The arena side of kernels/candidate/worker.h: the bump allocator over the worker's
// arena (the memfd after the control block, or the device arena) and the supervisor's
// reads and writes of it: memcpy on a host arena, the backend's upload, download and
// memset on a device arena, each done when it returns.
#include "kernels/candidate/worker.h"

#include "core/error.h"
#include "kernels/candidate/channel.h"

#include <cstring>
#include <fmt/format.h>

namespace fk::kernels {
namespace {

constexpr size_t kAlign = 64;

Tensor byte_view(void* p, size_t bytes, Device device) {
  return Tensor::borrow(p, DType::kU8, {static_cast<int64_t>(bytes)}, device);
}

}  // namespace

unsigned char* Worker::alloc_bytes(size_t bytes) {
  const size_t start = (used_ + kAlign - 1) / kAlign * kAlign;
  const size_t size = on_device() ? device_arena_.bytes : size_;
  if (bytes > size || start > size - bytes)
    fail(ErrorKind::kRuntime, "the candidate worker's {} arena ({:.1f} GiB) cannot hold {} more bytes",
         device_name(device()), static_cast<double>(size) / double(1u << 30), bytes);
  used_ = start + bytes;
  return (on_device() ? device_base_ : base_) + start;
}

size_t Worker::arena_capacity() const { return on_device() ? device_arena_.bytes : size_ - sandbox::kChannelBytes; }

Device Worker::device() const { return on_device() ? config_.device->device() : Device::cpu(); }

Tensor Worker::alloc(DType dtype, Shape shape) {
  const size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  return Tensor::borrow(alloc_bytes(std::max<size_t>(bytes, 1)), dtype, std::move(shape), device());
}

void Worker::write(const Tensor& dst, const Tensor& host) {
  if (host.defined() && host.device().kind != DeviceKind::kCpu) {
    if (!on_device() || host.device() != device() || host.nbytes() != dst.nbytes() || !in_arena(dst.data(), dst.nbytes()))
      fail(ErrorKind::kInternal, "worker write: {} <- {} do not match or lie outside the arena", dst.describe(),
           host.describe());
    config_.device->copy_rows(Tensor::borrow(dst.data(), host.dtype(), host.shape(), device()), host);
    config_.device->synchronize();  // the worker reads it from its own stream
    return;
  }
  const Tensor s = host.is_contiguous() ? host : host.contiguous_copy();
  if (s.nbytes() != dst.nbytes() || !in_arena(dst.data(), dst.nbytes()))
    fail(ErrorKind::kInternal, "worker write: {} <- {} do not match or lie outside the arena", dst.describe(),
         host.describe());
  write_bytes(dst.data(), s.data(), s.nbytes());
}

Tensor Worker::read(const Tensor& src) const {
  Tensor out = Tensor::empty(src.dtype(), src.shape());
  if (!in_arena(src.data(), src.nbytes()))
    fail(ErrorKind::kInternal, "worker read: {} lies outside the arena", src.describe());
  read_bytes(out.data(), src.data(), src.nbytes());
  return out;
}

void Worker::read_into(const Tensor& dst, const Tensor& src) const {
  if (!on_device() || dst.device() != device() || dst.nbytes() != src.nbytes() || !in_arena(src.data(), src.nbytes()))
    fail(ErrorKind::kInternal, "worker read: {} <- {} do not match or lie outside the arena", dst.describe(),
         src.describe());
  config_.device->copy_rows(dst, Tensor::borrow(src.data(), dst.dtype(), dst.shape(), device()));
  config_.device->synchronize();
}

void Worker::write_bytes(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (!on_device()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  config_.device->upload(byte_view(dst, bytes, device()), byte_view(const_cast<void*>(src), bytes, Device::cpu()));
}

void Worker::read_bytes(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  if (!on_device()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  config_.device->download(byte_view(dst, bytes, Device::cpu()), byte_view(const_cast<void*>(src), bytes, device()));
}

void Worker::set_bytes(void* dst, uint8_t byte, size_t bytes) {
  if (bytes == 0) return;
  if (!on_device()) {
    std::memset(dst, byte, bytes);
    return;
  }
  config_.device->memset(byte_view(dst, bytes, device()), byte);
  config_.device->synchronize();
}

OpCall Worker::copy_in(const OpCall& src) {
  OpCall c;
  c.params = src.params;
  for (const Tensor& t : src.args) {
    if (!t.defined()) {
      c.args.push_back(t);
      continue;
    }
    Tensor r = alloc(t.dtype(), t.shape());  // empty ones too: every defined tensor lives in the arena
    write(r, t);
    c.args.push_back(r);
  }
  return c;
}

void Worker::reset_arena() { used_ = on_device() ? 0 : sandbox::kChannelBytes; }

bool Worker::in_arena(const void* p, size_t bytes) const {
  const auto* c = static_cast<const unsigned char*>(p);
  if (on_device())
    return c >= device_base_ && bytes <= device_arena_.bytes && c <= device_base_ + device_arena_.bytes - bytes;
  return c >= base_ + sandbox::kChannelBytes && bytes <= size_ && c <= base_ + size_ - bytes;
}

}  // namespace fk::kernels
