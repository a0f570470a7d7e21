// Tensor: a typed, strided view of storage on a device.
//
// A Tensor is a cheap value (shared storage + dtype + shape + strides + offset).
// Storage is owned (allocated through the device's allocator, freed with the last
// Tensor that refers to it) or borrowed (the caller keeps the memory alive). Shapes
// and strides count elements, row-major by default. Nothing here touches CUDA: the
// CUDA backend registers an allocator for DeviceKind::kCuda at start-up.
#pragma once

#include "core/device.h"
#include "core/dtype.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fk {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& shape);
Shape shape_contiguous_strides(const Shape& shape);
std::string shape_string(const Shape& shape);

// What an allocator holds for one device, in bytes: handed out to tensors (in_use) and
// taken from the system (reserved: in use plus blocks cached for reuse), with the
// highest of each since the peaks were last reset.
struct MemoryUse {
  int64_t in_use = 0, peak_in_use = 0, reserved = 0, peak_reserved = 0;
  // Adds the deltas (negative: given back) and raises the peaks.
  void add(int64_t in_use_bytes, int64_t reserved_bytes) {
    in_use += in_use_bytes;
    reserved += reserved_bytes;
    peak_in_use = in_use > peak_in_use ? in_use : peak_in_use;
    peak_reserved = reserved > peak_reserved ? reserved : peak_reserved;
  }
  void reset_peaks() {
    peak_in_use = in_use;
    peak_reserved = reserved;
  }
};

// Allocator for one device kind. allocate() returns nullptr on failure.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes, Device device) = 0;
  virtual void deallocate(void* ptr, size_t bytes, Device device) = 0;
  // (optional) What it holds for `device`; nullopt where it does not count.
  virtual std::optional<MemoryUse> memory_use(Device /*device*/) const { return std::nullopt; }
  // (optional) Starts `device`'s peaks again at what it holds now.
  virtual void reset_memory_peaks(Device /*device*/) {}
  // (optional) Whether allocate(bytes) returns memory already filled with zeros, so
  // that Tensor::zeros need not write it (the CPU allocator's large blocks are fresh
  // anonymous pages: zero, and not backed by memory until written).
  virtual bool allocates_zeroed(size_t /*bytes*/) const { return false; }
};

// Installs the allocator for a device kind (the CPU one is built in). Not thread-safe
// against concurrent allocation: call at start-up.
void allocator_register(DeviceKind kind, Allocator* allocator);
// The registered allocator's MemoryUse for `device` (nullopt: none registered, or it
// does not count), and its peak reset.
std::optional<MemoryUse> memory_use(Device device);
void reset_memory_peaks(Device device);

class Storage {
 public:
  Storage(void* data, size_t bytes, Device device, bool owned);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  bool owned() const { return owned_; }

 private:
  void* data_;
  size_t bytes_;
  Device device_;
  bool owned_;
};

class Tensor {
 public:
  Tensor() = default;

  // New contiguous tensor; contents uninitialised. 64-byte aligned on the CPU.
  static Tensor empty(DType dtype, Shape shape, Device device = Device::cpu());
  // New contiguous CPU tensor filled with zeros. Large tensors are fresh pages that
  // take no memory until written (a placeholder that is never written costs nothing).
  static Tensor zeros(DType dtype, Shape shape);
  // Wraps memory the caller owns and keeps alive.
  static Tensor borrow(void* data, DType dtype, Shape shape, Device device = Device::cpu());
  static Tensor borrow(void* data, DType dtype, Shape shape, Shape strides, Device device);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t d) const;
  int64_t numel() const { return shape_numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  bool is_contiguous() const;

  void* data() const;
  template <typename T>
  T* data_as() const { return static_cast<T*>(data()); }
  template <typename T>
  std::span<T> span() const { return {data_as<T>(), static_cast<size_t>(numel())}; }

  // Views sharing storage. slice() keeps [start, start+length) of dimension d.
  Tensor slice(int64_t d, int64_t start, int64_t length) const;
  // Same elements, new shape; requires a contiguous tensor.
  Tensor reshape(Shape shape) const;
  // A contiguous copy on the CPU (same dtype).
  Tensor contiguous_copy() const;
  // A contiguous CPU copy converted to `dtype` (float types only).
  Tensor to_dtype(DType dtype) const;

  std::string describe() const;  // "bf16[4, 128] cpu"

 private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::kF32;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;  // in elements
};

}  // namespace fk
