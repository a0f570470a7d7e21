#include "core/tensor.h"

#include "core/error.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>

namespace fk {
namespace {

// Blocks of kLargeBlock bytes or more are anonymous mappings of their own (glibc's
// malloc maps blocks of this size too): zero-filled by the kernel, page-aligned, and
// committed only where written. Smaller ones come from the heap, 64-byte aligned.
class CpuAllocator final : public Allocator {
 public:
  static constexpr size_t kLargeBlock = size_t{32} << 20;

  void* allocate(size_t bytes, Device) override {
    void* p = nullptr;
    if (bytes >= kLargeBlock) {
      p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) return nullptr;
    } else {
      const size_t rounded = (bytes + 63) / 64 * 64;
      p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
      if (p == nullptr) return nullptr;
    }
    count(static_cast<int64_t>(bytes));
    return p;
  }
  void deallocate(void* ptr, size_t bytes, Device) override {
    if (bytes >= kLargeBlock) {
      munmap(ptr, bytes);
    } else {
      std::free(ptr);
    }
    count(-static_cast<int64_t>(bytes));
  }
  bool allocates_zeroed(size_t bytes) const override { return bytes >= kLargeBlock; }
  // Nothing is cached: reserved is what is in use (the bytes asked for; a large block's
  // pages are committed only where written).
  std::optional<MemoryUse> memory_use(Device) const override {
    std::lock_guard lock(mu_);
    return use_;
  }
  void reset_memory_peaks(Device) override {
    std::lock_guard lock(mu_);
    use_.reset_peaks();
  }

 private:
  void count(int64_t bytes) {
    std::lock_guard lock(mu_);
    use_.add(bytes, bytes);
  }
  mutable std::mutex mu_;
  MemoryUse use_;
};

CpuAllocator g_cpu_allocator;
Allocator* g_allocators[2] = {&g_cpu_allocator, nullptr};

Allocator* allocator_for(Device device) {
  Allocator* a = g_allocators[static_cast<int>(device.kind)];
  if (a == nullptr)
    fail(ErrorKind::kUnsupported, "no allocator for device {} (backend not built or not initialised)",
         device_name(device));
  return a;
}

}  // namespace

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Shape shape_contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

std::string shape_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

void allocator_register(DeviceKind kind, Allocator* allocator) {
  g_allocators[static_cast<int>(kind)] = allocator;
}

std::optional<MemoryUse> memory_use(Device device) {
  const Allocator* a = g_allocators[static_cast<int>(device.kind)];
  return a == nullptr ? std::nullopt : a->memory_use(device);
}

void reset_memory_peaks(Device device) {
  if (Allocator* a = g_allocators[static_cast<int>(device.kind)]; a != nullptr) a->reset_memory_peaks(device);
}

Storage::Storage(void* data, size_t bytes, Device device, bool owned)
    : data_(data), bytes_(bytes), device_(device), owned_(owned) {}

Storage::~Storage() {
  if (owned_ && data_ != nullptr) allocator_for(device_)->deallocate(data_, bytes_, device_);
}

Tensor Tensor::empty(DType dtype, Shape shape, Device device) {
  for (int64_t s : shape)
    if (s < 0) fail(ErrorKind::kInvalidArgument, "negative dimension in shape {}", shape_string(shape));
  Tensor t;
  const size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  void* p = allocator_for(device)->allocate(bytes, device);
  if (p == nullptr)
    fail(ErrorKind::kRuntime, "out of memory allocating {} bytes on {}", bytes, device_name(device));
  t.storage_ = std::make_shared<Storage>(p, bytes, device, true);
  t.dtype_ = dtype;
  t.strides_ = shape_contiguous_strides(shape);
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::zeros(DType dtype, Shape shape) {
  Tensor t = empty(dtype, std::move(shape));
  if (!allocator_for(Device::cpu())->allocates_zeroed(t.nbytes())) std::memset(t.data(), 0, t.nbytes());
  return t;
}

Tensor Tensor::borrow(void* data, DType dtype, Shape shape, Device device) {
  Shape strides = shape_contiguous_strides(shape);
  return borrow(data, dtype, std::move(shape), std::move(strides), device);
}

Tensor Tensor::borrow(void* data, DType dtype, Shape shape, Shape strides, Device device) {
  FK_ASSERT(shape.size() == strides.size());
  Tensor t;
  t.storage_ = std::make_shared<Storage>(data, static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype),
                                         device, false);
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  return t;
}

int64_t Tensor::size(int64_t d) const {
  if (d < 0) d += dim();
  FK_ASSERT(d >= 0 && d < dim());
  return shape_[static_cast<size_t>(d)];
}

bool Tensor::is_contiguous() const { return strides_ == shape_contiguous_strides(shape_); }

void* Tensor::data() const {
  if (!storage_) return nullptr;
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t length) const {
  if (d < 0) d += dim();
  FK_ASSERT(d >= 0 && d < dim());
  const auto ud = static_cast<size_t>(d);
  if (start < 0 || length < 0 || start + length > shape_[ud])
    fail(ErrorKind::kInvalidArgument, "slice [{}, {}) out of range for dimension {} of {}", start,
         start + length, d, shape_string(shape_));
  Tensor t = *this;
  t.offset_ += start * strides_[ud];
  t.shape_[ud] = length;
  return t;
}

Tensor Tensor::reshape(Shape shape) const {
  if (!is_contiguous()) fail(ErrorKind::kInvalidArgument, "reshape of a non-contiguous tensor");
  if (shape_numel(shape) != numel())
    fail(ErrorKind::kInvalidArgument, "reshape {} -> {} changes the element count",
         shape_string(shape_), shape_string(shape));
  Tensor t = *this;
  t.strides_ = shape_contiguous_strides(shape);
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::contiguous_copy() const {
  if (device().kind != DeviceKind::kCpu)
    fail(ErrorKind::kUnsupported, "contiguous_copy of a {} tensor", device_name(device()));
  Tensor out = empty(dtype_, shape_);
  const size_t es = dtype_size(dtype_);
  if (is_contiguous()) {
    std::memcpy(out.data(), data(), nbytes());
    return out;
  }
  const int64_t n = numel();
  std::vector<int64_t> idx(shape_.size(), 0);
  const char* src = static_cast<const char*>(data());
  char* dst = static_cast<char*>(out.data());
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides_[d];
    std::memcpy(dst + i * static_cast<int64_t>(es), src + off * static_cast<int64_t>(es), es);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < shape_[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

Tensor Tensor::to_dtype(DType dtype) const {
  if (device().kind != DeviceKind::kCpu)
    fail(ErrorKind::kUnsupported, "to_dtype of a {} tensor", device_name(device()));
  Tensor src = is_contiguous() ? *this : contiguous_copy();
  Tensor out = empty(dtype, shape_);
  dtype_convert(src.data(), dtype_, out.data(), dtype, static_cast<size_t>(numel()));
  return out;
}

std::string Tensor::describe() const {
  return fmt::format("{}{} {}", dtype_name(dtype_), shape_string(shape_), device_name(device()));
}

}  // namespace fk
