#include "kernels/cuda/cuda_backend.h"

#include "collectives/communicator.h"
#include "core/error.h"
#include "kernels/cuda/cublaslt_api.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_tracer.h"
#include "kernels/cuda/cudnn_status.h"
#include "kernels/cuda/fill_launch.h"
#include "kernels/cuda/nvml.h"
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"

#if FK_HAVE_NCCL
#include "collectives/nccl_communicator.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <nvtx3/nvToolsExtMem.h>
#include <mutex>
#include <vector>

namespace fk::cuda {
namespace {

// Sets `device` current for the scope, restoring the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ != device) FK_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceScope() {
    int now = -1;
    if (previous_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

size_t block_size(size_t bytes) {
  constexpr size_t kSmall = size_t{1} << 20, kLargeStep = size_t{2} << 20;
  if (bytes <= kSmall) return std::max<size_t>(512, (bytes + 511) / 512 * 512);
  return (bytes + kLargeStep - 1) / kLargeStep * kLargeStep;
}

// The memory of one captured graph (CachingAllocator::begin_capture): blocks its work
// allocated, of which the free ones are reused only inside the same capture, and blocks
// made before the capture that were freed during it (the graph may still use them).
// All go back to the cache when the graph is destroyed.
struct GraphPool {
  int device = 0;
  std::map<size_t, std::vector<void*>> free;  // by block size
  std::vector<std::pair<size_t, void*>> held;
};

class CachingAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, Device device) override {
    const size_t size = block_size(bytes);
    GraphPool* pool = capturing_ != nullptr && capturing_->device == device.index ? capturing_ : nullptr;
    {
      std::lock_guard lock(mu_);
      auto& list = pool != nullptr ? pool->free[size] : free_[{device.index, size}];
      if (!list.empty()) {
        void* p = list.back();
        list.pop_back();
        use_[device.index].add(static_cast<int64_t>(size), 0);
        return p;
      }
    }
    void* p = fresh(size, device);
    if (p != nullptr) {
      std::lock_guard lock(mu_);
      if (pool != nullptr) owner_[p] = pool;
      use_[device.index].add(static_cast<int64_t>(size), static_cast<int64_t>(size));
    }
    return p;
  }
  void deallocate(void* ptr, size_t bytes, Device device) override {
    const size_t size = block_size(bytes);
    std::lock_guard lock(mu_);
    use_[device.index].add(-static_cast<int64_t>(size), 0);
    if (auto it = owner_.find(ptr); it != owner_.end()) {
      it->second->free[size].push_back(ptr);
    } else if (capturing_ != nullptr && capturing_->device == device.index) {
      capturing_->held.emplace_back(size, ptr);
    } else {
      free_[{device.index, size}].push_back(ptr);
    }
  }
  // While a capture runs on the calling thread, its allocations come from `pool`.
  void begin_capture(GraphPool* pool) { capturing_ = pool; }
  void end_capture() { capturing_ = nullptr; }
  // The pool's blocks back to the cache: free and held ones now, those still in use
  // when their tensors go.
  void release_pool(GraphPool& pool) {
    std::lock_guard lock(mu_);
    for (auto& [size, list] : pool.free)
      for (void* p : list) free_[{pool.device, size}].push_back(p);
    for (const auto& [size, p] : pool.held) free_[{pool.device, size}].push_back(p);
    pool.free.clear();
    pool.held.clear();
    for (auto it = owner_.begin(); it != owner_.end();) it = it->second == &pool ? owner_.erase(it) : std::next(it);
  }
  // cudaFree of every cached block of `device` (the current device must be it); blocks
  // of a live graph's pool stay.
  void release_cached(int device) {
    std::lock_guard lock(mu_);
    for (auto& [key, list] : free_)
      if (key.first == device) {
        for (void* p : list) cudaFree(p);
        use_[device].add(0, -static_cast<int64_t>(key.second * list.size()));
        list.clear();
      }
  }
  // Blocks in use count their rounded size (block_size); blocks a graph's pool holds,
  // or cached, count as reserved only.
  std::optional<MemoryUse> memory_use(Device device) const override {
    std::lock_guard lock(mu_);
    const auto it = use_.find(device.index);
    return it == use_.end() ? MemoryUse{} : it->second;
  }
  void reset_memory_peaks(Device device) override {
    std::lock_guard lock(mu_);
    use_[device.index].reset_peaks();
  }

 private:
  // A new block from cudaMalloc; on running out, the cache is given back first.
  void* fresh(size_t size, Device device) {
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) return nullptr;
    if (previous != device.index && cudaSetDevice(device.index) != cudaSuccess) return nullptr;
    void* p = nullptr;
    cudaError_t rc = cudaMalloc(&p, size);
    if (rc == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: clear it, give back the cache and retry
      release_cached(device.index);
      rc = cudaMalloc(&p, size);
    }
    if (rc != cudaSuccess) {
      if (rc == cudaErrorMemoryAllocation) cudaGetLastError();
      p = nullptr;
    }
    if (previous != device.index) cudaSetDevice(previous);
    return p;
  }

  mutable std::mutex mu_;
  std::map<int, MemoryUse> use_;  // by device
  std::map<std::pair<int, size_t>, std::vector<void*>> free_;
  std::map<void*, GraphPool*> owner_;          // blocks of live graph pools
  static thread_local GraphPool* capturing_;   // the pool of this thread's capture
};

thread_local GraphPool* CachingAllocator::capturing_ = nullptr;

CachingAllocator& caching_allocator() {
  static CachingAllocator* a = [] {
    auto* alloc = new CachingAllocator();  // lives for the process: tensors may outlive any backend
    allocator_register(DeviceKind::kCuda, alloc);
    return alloc;
  }();
  return *a;
}

class EventTimer final : public kernels::Timer {
 public:
  explicit EventTimer(cudaStream_t stream) : stream_(stream) {
    FK_CUDA_CHECK(cudaEventCreate(&start_));
    FK_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start() override { FK_CUDA_CHECK(cudaEventRecord(start_, stream_)); }
  void stop() override { FK_CUDA_CHECK(cudaEventRecord(stop_, stream_)); }
  double seconds() override {
    FK_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    FK_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms / 1000.0;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

class CudaGraph final : public kernels::Graph {
 public:
  CudaGraph(int device, cudaStream_t stream, cudaGraphExec_t exec, std::unique_ptr<GraphPool> pool)
      : device_(device), stream_(stream), exec_(exec), pool_(std::move(pool)) {}
  ~CudaGraph() override {
    DeviceScope scope(device_);
    cudaStreamSynchronize(stream_);  // replays in flight use the pool
    cudaGraphExecDestroy(exec_);
    caching_allocator().release_pool(*pool_);
  }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  void replay() override {
    DeviceScope scope(device_);
    FK_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
  }

 private:
  int device_;
  cudaStream_t stream_;
  cudaGraphExec_t exec_;
  std::unique_ptr<GraphPool> pool_;
};

std::string cuda_error_text(cudaError_t e) { return fmt::format("{} ({})", cudaGetErrorName(e), cudaGetErrorString(e)); }

void require_device(const Tensor& t, int device, const char* what) {
  if (!t.defined() || t.device() != Device::cuda(device) || !t.is_contiguous())
    fail(ErrorKind::kInvalidArgument, "cuda backend: {}: {} is not a contiguous tensor on cuda:{}", what,
         t.describe(), device);
}

int attribute(cudaDeviceAttr attr, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

class CudaBackend final : public kernels::Backend {
 public:
  explicit CudaBackend(int device) : device_(device) {
    caching_allocator();
    register_cuda_ops();
    DeviceScope scope(device_);
    FK_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not inside the first timed call
    FK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    cudaDeviceProp prop{};
    FK_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    facts_.name = prop.name;
    facts_.arch = fmt::format("sm_{}{}", prop.major, prop.minor);
    facts_.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
    facts_.cache_bytes = prop.l2CacheSize;
    facts_.sm_count = prop.multiProcessorCount;
    facts_.max_sm_clock_mhz = attribute(cudaDevAttrClockRate, device_) / 1000;
    facts_.max_mem_clock_mhz = attribute(cudaDevAttrMemoryClockRate, device_) / 1000;
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    facts_.driver = fmt::format("cuda runtime {}.{}, driver api {}.{}", runtime / 1000, runtime % 1000 / 10,
                                driver / 1000, driver % 1000 / 10);
    if (const std::string nv = nvml_driver_version(); !nv.empty()) facts_.driver += ", " + nv;
    facts_.driver += ", " + cudnn_library().describe();  // the attention baseline's prefill engine
    facts_.driver += ", " + cublaslt_library().describe();  // the linear baseline's GEMMs
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device_) == cudaSuccess) facts_.pci_bus_id = bus;
    // The judge's timing needs no persisting L2 lines: hold the limit at 0 (audit checks it).
    FK_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    activate();
  }
  ~CudaBackend() override {
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    flush_buffer_ = Tensor();
    if (current_stream() == stream_) set_current_stream(nullptr);
    cudaStreamDestroy(stream_);
    caching_allocator().release_cached(device_);
    cudaSetDevice(previous);
  }

  DeviceKind kind() const override { return DeviceKind::kCuda; }
  Device device() const override { return Device::cuda(device_); }
  const kernels::DeviceFacts& facts() const override { return facts_; }
  kernels::DeviceState state() override { return nvml_state(facts_.pci_bus_id); }
  void activate() override {
    FK_CUDA_CHECK(cudaSetDevice(device_));
    set_current_stream(stream_);
  }

  Tensor empty(DType dtype, const Shape& shape) override {
    activate();
    return Tensor::empty(dtype, shape, device());
  }
  void upload(const Tensor& dst, const Tensor& host) override {
    activate();
    require_device(dst, device_, "upload");
    const Tensor src = host.is_contiguous() ? host : host.contiguous_copy();
    if (src.device().kind != DeviceKind::kCpu || src.nbytes() != dst.nbytes())
      fail(ErrorKind::kInvalidArgument, "cuda backend: upload: {} <- {} do not match", dst.describe(), host.describe());
    if (dst.nbytes() == 0) return;
    FK_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), dst.nbytes(), cudaMemcpyHostToDevice, stream_));
    FK_CUDA_CHECK(cudaStreamSynchronize(stream_));  // host memory may be reused on return
  }
  void download(const Tensor& host, const Tensor& src) override {
    activate();
    require_device(src, device_, "download");
    if (host.device().kind != DeviceKind::kCpu || !host.is_contiguous() || host.nbytes() != src.nbytes())
      fail(ErrorKind::kInvalidArgument, "cuda backend: download: {} <- {} do not match", host.describe(), src.describe());
    if (src.nbytes() == 0) return;
    FK_CUDA_CHECK(cudaMemcpyAsync(host.data(), src.data(), src.nbytes(), cudaMemcpyDeviceToHost, stream_));
    FK_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy(const Tensor& dst, const Tensor& src) override {
    activate();
    require_device(dst, device_, "copy");
    require_device(src, device_, "copy");
    if (dst.nbytes() != src.nbytes())
      fail(ErrorKind::kInvalidArgument, "cuda backend: copy: {} <- {} do not match", dst.describe(), src.describe());
    if (dst.nbytes() > 0)
      FK_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), dst.nbytes(), cudaMemcpyDeviceToDevice, stream_));
  }
  void copy_rows(const Tensor& dst, const Tensor& src) override {
    activate();
    if (dst.device() != device() || src.device() != device() || dst.shape() != src.shape() ||
        dst.dtype() != src.dtype() || !rows_copyable(dst) || !rows_copyable(src))
      fail(ErrorKind::kInvalidArgument, "cuda backend: copy_rows: {} <- {}: expected one shape and dtype on cuda:{}, rows "
           "contiguous", dst.describe(), src.describe(), device_);
    if (dst.numel() == 0) return;
    if (dst.is_contiguous() && src.is_contiguous()) {
      if (dst.data() != src.data())
        FK_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), dst.nbytes(), cudaMemcpyDeviceToDevice, stream_));
      return;
    }
    const int64_t rows = dst.size(0), cols = dst.size(1);
    const size_t es = dtype_size(dst.dtype());
    const int64_t ds = dst.is_contiguous() ? cols : dst.strides()[0], ss = src.is_contiguous() ? cols : src.strides()[0];
    FK_CUDA_CHECK(cudaMemcpy2DAsync(dst.data(), static_cast<size_t>(ds) * es, src.data(), static_cast<size_t>(ss) * es,
                                    static_cast<size_t>(cols) * es, static_cast<size_t>(rows), cudaMemcpyDeviceToDevice,
                                    stream_));
  }
  void memset(const Tensor& t, uint8_t byte) override {
    activate();
    require_device(t, device_, "memset");
    if (t.nbytes() > 0) FK_CUDA_CHECK(cudaMemsetAsync(t.data(), byte, t.nbytes(), stream_));
  }
  void fill(const Tensor& t, double value) override {
    activate();
    require_device(t, device_, "fill");
    const auto e = host::elem_of(t.dtype());
    if (!e) fail(ErrorKind::kUnsupported, "cuda backend: fill: dtype {} is not a float type", dtype_name(t.dtype()));
    host::check_launch(launch::fill(t.data(), *e, t.numel(), static_cast<float>(value), stream_), "fill");
  }

  void fill_uniform(const Tensor& t, int64_t offset, const kernels::UniformBlock& b) override {
    activate();
    require_device(t, device_, "fill_uniform");
    const auto e = host::elem_of(t.dtype());
    if (!e)
      fail(ErrorKind::kUnsupported, "cuda backend: fill_uniform: dtype {} is not a float type", dtype_name(t.dtype()));
    if (!t.is_contiguous() || offset < 0 || b.rows < 0 || b.ncols < 0 || offset + b.numel() > t.numel())
      fail(ErrorKind::kInvalidArgument, "cuda backend: fill_uniform: {} elements at {} do not fit {}", b.numel(), offset,
           t.describe());
    char* at = static_cast<char*>(t.data()) + static_cast<size_t>(offset) * dtype_size(t.dtype());
    host::check_launch(launch::fill_uniform(at, *e, b.key, b.cols, b.row0, b.rows, b.col0, b.ncols, b.lo, b.hi, b.add,
                                            stream_),
                       "fill_uniform");
  }

  void* stream() const override { return stream_; }
  void synchronize() override {
    activate();
    FK_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  std::unique_ptr<kernels::Timer> timer() override {
    activate();
    return std::make_unique<EventTimer>(stream_);
  }
  std::unique_ptr<kernels::Graph> capture(const std::function<void()>& work) override {
    activate();
    auto pool = std::make_unique<GraphPool>();
    pool->device = device_;
    // Relaxed: the work may make its first cudaMalloc (a new block, a library's
    // workspace) while it is recorded; a wait or a pageable copy still ends the capture.
    FK_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
    caching_allocator().begin_capture(pool.get());
    std::string why;
    try {
      work();
    } catch (const std::exception& e) {
      why = e.what();
    }
    caching_allocator().end_capture();
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    if (why.empty() && ended != cudaSuccess) why = "ending the capture: " + cuda_error_text(ended);
    cudaGraphExec_t exec = nullptr;
    if (why.empty()) {
      if (const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0); e != cudaSuccess)
        why = "instantiating the graph: " + cuda_error_text(e);
    }
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (!why.empty()) {
      cudaGetLastError();  // capture errors are not sticky
      caching_allocator().release_pool(*pool);
      fail(ErrorKind::kUnsupported, "cuda:{}: the work cannot be captured as a CUDA graph: {}", device_, why);
    }
    return std::make_unique<CudaGraph>(device_, stream_, exec, std::move(pool));
  }
  void flush_cache() override {
    activate();
    if (!flush_buffer_.defined())
      // Four times the L2, at least 256 MiB (what triton.testing.do_bench clears):
      // twice the L2 left some lines of the previous inputs behind (bench/RESULTS.md).
      flush_buffer_ = empty(DType::kF32, {std::max<int64_t>(4 * facts_.cache_bytes, int64_t{256} << 20) / 4});
    flush_value_ = static_cast<uint8_t>(flush_value_ + 1);
    FK_CUDA_CHECK(cudaMemsetAsync(flush_buffer_.data(), flush_value_, flush_buffer_.nbytes(), stream_));
  }
  std::string audit() override {
    activate();
    size_t persisting = 0;
    if (cudaDeviceGetLimit(&persisting, cudaLimitPersistingL2CacheSize) == cudaSuccess && persisting != 0)
      return fmt::format("the persisting-L2 limit is {} bytes (the judge holds it at 0)", persisting);
    const cudaError_t pending = cudaPeekAtLastError();
    if (pending != cudaSuccess)
      return fmt::format("a CUDA error is pending: {} ({})", cudaGetErrorName(pending), cudaGetErrorString(pending));
    return "";
  }

  kernels::SharedMemory share_memory(size_t bytes) override {
    activate();
    kernels::SharedMemory m;
    m.bytes = bytes;
    // Its own cudaMalloc, outside the caching allocator: an IPC handle names a whole allocation.
    const cudaError_t e = cudaMalloc(&m.data, std::max<size_t>(bytes, 1));
    if (e != cudaSuccess) {
      cudaGetLastError();
      size_t free = 0, total = 0;
      cudaMemGetInfo(&free, &total);
      fail(ErrorKind::kRuntime, "out of memory: {:.2f} GiB for a candidate worker's arena on cuda:{} ({:.2f} GiB free)",
           static_cast<double>(bytes) / double(1u << 30), device_, static_cast<double>(free) / double(1u << 30));
    }
    cudaIpcMemHandle_t h{};
    const cudaError_t he = cudaIpcGetMemHandle(&h, m.data);
    if (he != cudaSuccess) {
      cudaFree(m.data);
      fail(ErrorKind::kUnsupported, "cuda:{} cannot share memory with another process (cudaIpcGetMemHandle: {})",
           device_, cudaGetErrorString(he));
    }
    m.handle.assign(reinterpret_cast<const char*>(&h), sizeof h);
    return m;
  }
  void free_shared_memory(const kernels::SharedMemory& m) override {
    if (m.data == nullptr) return;
    activate();
    cudaFree(m.data);
  }
  void* open_shared_memory(const std::string& handle, size_t bytes) override {
    activate();
    cudaIpcMemHandle_t h{};
    if (handle.size() != sizeof h)
      fail(ErrorKind::kInvalidArgument, "cuda:{}: a shared-memory handle has {} bytes, not {}", device_, handle.size(),
           sizeof h);
    std::memcpy(&h, handle.data(), sizeof h);
    void* p = nullptr;
    const cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess)
      fail(ErrorKind::kRuntime, "cuda:{} cannot map the {} bytes another process shared (cudaIpcOpenMemHandle: {})",
           device_, bytes, cudaGetErrorString(e));
    return p;
  }
  std::unique_ptr<kernels::DeviceTracer> tracer() override {
    activate();
    return cuda_tracer_create(device_, stream_);
  }

  // NVTX's memory API: calls that go nowhere unless a tool (compute-sanitizer) has
  // injected itself; the runtime is initialised first, as the sanitizer requires.
  void mark_pool(void* base, size_t bytes) override {
    activate();
    if (nvtx_domain_ == nullptr) nvtx_domain_ = nvtxDomainCreateA("FastKernels");
    nvtxMemVirtualRangeDesc_t range{};
    range.ptr = base;
    range.size = bytes;
    nvtxMemHeapDesc_t d{};
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.typeSpecificDescSize = sizeof range;
    d.typeSpecificDesc = &range;
    pools_[base] = nvtxMemHeapRegister(nvtx_domain_, &d);
  }
  void use_pool_regions(void* base, const std::vector<kernels::MemoryRange>& regions) override {
    const auto pool = pools_.find(base);
    if (pool == pools_.end()) fail(ErrorKind::kInternal, "cuda:{}: use_pool_regions on memory never marked a pool", device_);
    nvtxMemHeapReset(nvtx_domain_, pool->second);
    std::vector<nvtxMemVirtualRangeDesc_t> ranges;
    for (const auto& r : regions) {
      if (r.bytes == 0) continue;
      nvtxMemVirtualRangeDesc_t d{};
      d.ptr = r.data;
      d.size = r.bytes;
      ranges.push_back(d);
    }
    if (ranges.empty()) return;
    nvtxMemRegionsRegisterBatch_t b{};
    b.extCompatID = NVTX_EXT_COMPATID_MEM;
    b.structSize = sizeof b;
    b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    b.heap = pool->second;
    b.regionCount = ranges.size();
    b.regionDescElementSize = sizeof(nvtxMemVirtualRangeDesc_t);
    b.regionDescElements = ranges.data();
    nvtxMemRegionsRegister(nvtx_domain_, &b);
  }

  std::unique_ptr<collectives::Communicator> communicator(collectives::Communicator& group) override {
#if FK_HAVE_NCCL
    activate();
    return collectives::nccl_from_mpi(group, device_, stream_);
#else
    (void)group;
    fail(ErrorKind::kUnsupported, "cuda backend: this build has no NCCL, so CUDA ranks cannot form a communicator");
#endif
  }

 private:
  nvtxDomainHandle_t nvtx_domain_ = nullptr;
  std::map<void*, nvtxMemHeapHandle_t> pools_;
  int device_;
  cudaStream_t stream_ = nullptr;
  kernels::DeviceFacts facts_;
  Tensor flush_buffer_;
  uint8_t flush_value_ = 0;
};

}  // namespace

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky "no device / no driver" error
    return 0;
  }
  return n;
}

std::unique_ptr<kernels::Backend> cuda_backend_create(int index) {
  const int n = device_count();
  if (index < 0 || index >= n) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    fail(ErrorKind::kUnsupported,
         "backend cuda: this rank needs CUDA device {} but {} {} visible (CUDA_VISIBLE_DEVICES={}); start at most "
         "one rank per GPU on each node",
         index, n, n == 1 ? "is" : "are", visible ? visible : "unset");
  }
  return std::make_unique<CudaBackend>(index);
}

}  // namespace fk::cuda
