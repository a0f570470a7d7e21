#include "collectives/buffer_space.h"

#include "core/error.h"

#include <cstdlib>
#include <cstring>
#include <utility>

namespace fk::collectives {

namespace {

class HostSpace final : public BufferSpace {
 public:
  std::string name() const override { return "host"; }
  void* allocate(size_t bytes) override {
    // 64-byte alignment covers every dtype and vector loads; never null, even for 0.
    const size_t rounded = (bytes + 63) / 64 * 64 + 64;
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr) fail(ErrorKind::kRuntime, "host buffer: allocating {} bytes failed", bytes);
    return p;
  }
  void release(void* ptr) noexcept override { std::free(ptr); }
  void upload(void* dst, const void* host_src, size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, host_src, bytes);
  }
  void download(void* host_dst, const void* src, size_t bytes) override {
    if (bytes > 0) std::memcpy(host_dst, src, bytes);
  }
};

}  // namespace

BufferSpace& host_buffer_space() {
  static HostSpace space;
  return space;
}

SpaceBuffer& SpaceBuffer::operator=(SpaceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    space_ = std::exchange(other.space_, nullptr);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void SpaceBuffer::upload(const void* host_src, size_t bytes) const {
  FK_ASSERT(bytes <= bytes_);
  if (bytes > 0) space_->upload(ptr_, host_src, bytes);
}

void SpaceBuffer::download(void* host_dst, size_t bytes) const {
  FK_ASSERT(bytes <= bytes_);
  if (bytes > 0) space_->download(host_dst, ptr_, bytes);
}

void SpaceBuffer::reset() noexcept {
  if (space_ != nullptr && ptr_ != nullptr) space_->release(ptr_);
  space_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

}  // namespace fk::collectives
