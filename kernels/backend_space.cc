#include "kernels/backend_space.h"

#include "core/error.h"

#include <map>
#include <mutex>

namespace fk::kernels {
namespace {

class BackendSpace final : public collectives::BufferSpace {
 public:
  explicit BackendSpace(Backend& backend) : backend_(backend) {}
  std::string name() const override { return backend_.name(); }
  void* allocate(size_t bytes) override {
    Tensor t = backend_.empty(DType::kU8, {static_cast<int64_t>(std::max<size_t>(bytes, 1))});
    std::lock_guard lock(mu_);
    void* p = t.data();
    blocks_[p] = std::move(t);
    return p;
  }
  void release(void* ptr) noexcept override {
    std::lock_guard lock(mu_);
    blocks_.erase(ptr);
  }
  void upload(void* dst, const void* host_src, size_t bytes) override {
    if (bytes == 0) return;
    backend_.upload(device_bytes(dst, bytes), Tensor::borrow(const_cast<void*>(host_src), DType::kU8,
                                                             {static_cast<int64_t>(bytes)}));
  }
  void download(void* host_dst, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    backend_.download(Tensor::borrow(host_dst, DType::kU8, {static_cast<int64_t>(bytes)}),
                      device_bytes(const_cast<void*>(src), bytes));
  }

 private:
  Tensor device_bytes(void* p, size_t bytes) const {
    return Tensor::borrow(p, DType::kU8, {static_cast<int64_t>(bytes)}, {1}, backend_.device());
  }

  Backend& backend_;
  std::mutex mu_;
  std::map<void*, Tensor> blocks_;
};

}  // namespace

std::unique_ptr<collectives::BufferSpace> backend_buffer_space(Backend& backend) {
  return std::make_unique<BackendSpace>(backend);
}

}  // namespace fk::kernels
