#include "kernels/cpu/cpu_backend.h"

#include "collectives/communicator.h"
#include "core/error.h"
#include "kernels/cpu/elem.h"

#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <vector>

namespace fk::kernels {
namespace {

using Clock = std::chrono::steady_clock;

class CpuTimer final : public Timer {
 public:
  void start() override { t0_ = Clock::now(); }
  void stop() override { t1_ = Clock::now(); }
  double seconds() override { return std::chrono::duration<double>(t1_ - t0_).count(); }

 private:
  Clock::time_point t0_{}, t1_{};
};

void require_cpu(const Tensor& t, const char* what) {
  if (t.defined() && t.device().kind != DeviceKind::kCpu)
    fail(ErrorKind::kInvalidArgument, "cpu backend: {}: {} is not in host memory", what, t.describe());
}

// Copies the elements of `src` (any strides) into contiguous `dst` of equal bytes.
void copy_contiguous(const Tensor& dst, const Tensor& src, const char* what) {
  if (!dst.is_contiguous() || dst.nbytes() != src.nbytes() || dst.dtype() != src.dtype())
    fail(ErrorKind::kInvalidArgument, "cpu backend: {}: {} <- {} do not match", what, dst.describe(), src.describe());
  if (src.is_contiguous()) {
    if (dst.nbytes() > 0 && dst.data() != src.data()) std::memcpy(dst.data(), src.data(), dst.nbytes());
    return;
  }
  const Tensor c = src.contiguous_copy();
  if (dst.nbytes() > 0) std::memcpy(dst.data(), c.data(), dst.nbytes());
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const CpuBackendOptions& o) {
    const size_t cache = o.flush_bytes > 0 ? o.flush_bytes : size_t{16} << 20;
    facts_.name = fmt::format("cpu ({} threads)", omp_get_max_threads());
#if defined(__x86_64__)
    facts_.arch = "x86_64";
#elif defined(__aarch64__)
    facts_.arch = "aarch64";
#endif
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    facts_.memory_bytes = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
    facts_.cache_bytes = static_cast<int64_t>(cache);
  }

  DeviceKind kind() const override { return DeviceKind::kCpu; }
  Device device() const override { return Device::cpu(); }
  const DeviceFacts& facts() const override { return facts_; }
  DeviceState state() override { return {}; }
  void activate() override {}

  Tensor empty(DType dtype, const Shape& shape) override { return Tensor::empty(dtype, shape); }
  void upload(const Tensor& dst, const Tensor& host) override {
    require_cpu(dst, "upload");
    require_cpu(host, "upload");
    copy_contiguous(dst, host, "upload");
  }
  void download(const Tensor& host, const Tensor& src) override {
    require_cpu(host, "download");
    require_cpu(src, "download");
    copy_contiguous(host, src, "download");
  }
  void copy(const Tensor& dst, const Tensor& src) override {
    require_cpu(dst, "copy");
    require_cpu(src, "copy");
    copy_contiguous(dst, src, "copy");
  }
  void copy_rows(const Tensor& dst, const Tensor& src) override {
    require_cpu(dst, "copy_rows");
    require_cpu(src, "copy_rows");
    if (dst.shape() != src.shape() || dst.dtype() != src.dtype() || !rows_copyable(dst) || !rows_copyable(src))
      fail(ErrorKind::kInvalidArgument, "cpu backend: copy_rows: {} <- {}: expected one shape and dtype, rows contiguous",
           dst.describe(), src.describe());
    if (dst.numel() == 0) return;
    if (dst.is_contiguous() && src.is_contiguous()) {
      if (dst.data() != src.data()) std::memmove(dst.data(), src.data(), dst.nbytes());
      return;
    }
    const int64_t rows = dst.size(0), cols = dst.size(1);
    const size_t es = dtype_size(dst.dtype()), row = static_cast<size_t>(cols) * es;
    const int64_t ds = dst.is_contiguous() ? cols : dst.strides()[0], ss = src.is_contiguous() ? cols : src.strides()[0];
    auto* d = static_cast<char*>(dst.data());
    const auto* s = static_cast<const char*>(src.data());
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(d + static_cast<size_t>(r * ds) * es, s + static_cast<size_t>(r * ss) * es, row);
  }
  void memset(const Tensor& t, uint8_t byte) override {
    require_cpu(t, "memset");
    if (!t.is_contiguous()) fail(ErrorKind::kInvalidArgument, "cpu backend: memset: {} is not contiguous", t.describe());
    if (t.nbytes() > 0) std::memset(t.data(), byte, t.nbytes());
  }
  void fill(const Tensor& t, double value) override {
    require_cpu(t, "fill");
    if (!t.is_contiguous()) fail(ErrorKind::kInvalidArgument, "cpu backend: fill: {} is not contiguous", t.describe());
    if (t.dtype() == DType::kF64) {
      for (double& v : t.span<double>()) v = value;
      return;
    }
    cpu::dispatch_float(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T v = cpu::store<T>(static_cast<float>(value));
      for (T& e : t.span<T>()) e = v;
    });
  }

  void* stream() const override { return nullptr; }
  void synchronize() override {}
  std::unique_ptr<Timer> timer() override { return std::make_unique<CpuTimer>(); }
  void flush_cache() override {
    if (flush_.empty()) flush_.assign(static_cast<size_t>(facts_.cache_bytes), 1);
    for (size_t b = 0; b < flush_.size(); b += 64) flush_[b] = static_cast<unsigned char>(flush_[b] + 1);
    sink_ = static_cast<unsigned char>(sink_ ^ flush_[flush_.size() / 2]);
  }
  std::string audit() override { return ""; }

  std::unique_ptr<collectives::Communicator> communicator(collectives::Communicator& group) override {
    return group.split(0, group.rank());
  }

 private:
  DeviceFacts facts_;
  std::vector<unsigned char> flush_;
  volatile unsigned char sink_ = 0;  // keeps the flush writes observable
};

}  // namespace

std::unique_ptr<Backend> cpu_backend_create(const CpuBackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace fk::kernels
