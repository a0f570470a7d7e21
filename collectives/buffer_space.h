// BufferSpace: the memory a Communicator's buffers live in (host for MPI, a CUDA
// device for NCCL), so backend-neutral code (the bandwidth probe, tests) can allocate
// buffers and move host data in and out without including CUDA headers.
//
// Contract: allocate() returns storage for `bytes` bytes (a non-null pointer even for
// 0 bytes) or throws fk::Error(kRuntime); upload/download are synchronous (done when
// they return) and must not be called while a communicator still has work enqueued on
// the buffer (call Communicator::synchronize() first).
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace fk::collectives {

class BufferSpace {
 public:
  virtual ~BufferSpace() = default;
  virtual std::string name() const = 0;  // "host", "cuda:0"
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* ptr) noexcept = 0;
  virtual void upload(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void download(void* host_dst, const void* src, size_t bytes) = 0;
};

// Process memory (malloc/memcpy); the space of the MPI backend. Thread-safe.
BufferSpace& host_buffer_space();

// One allocation in a BufferSpace, released on destruction. Move-only.
class SpaceBuffer {
 public:
  SpaceBuffer() = default;
  SpaceBuffer(BufferSpace& space, size_t bytes) : space_(&space), ptr_(space.allocate(bytes)), bytes_(bytes) {}
  ~SpaceBuffer() { reset(); }
  SpaceBuffer(SpaceBuffer&& other) noexcept { *this = std::move(other); }
  SpaceBuffer& operator=(SpaceBuffer&& other) noexcept;
  SpaceBuffer(const SpaceBuffer&) = delete;
  SpaceBuffer& operator=(const SpaceBuffer&) = delete;

  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  // Copies `bytes` (<= this->bytes()) from host memory in / out.
  void upload(const void* host_src, size_t bytes) const;
  void download(void* host_dst, size_t bytes) const;
  void reset() noexcept;

 private:
  BufferSpace* space_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace fk::collectives
