// NcclCommunicator: lifecycle (init, finalize/abort), polling, synchronize, split and
// the MPI bootstrap. The operations themselves are in nccl_ops.cc.
#include "collectives/nccl_communicator.h"

#include "collectives/nccl_env.h"
#include "collectives/nccl_impl.h"
#include "collectives/validate.h"
#include "core/error.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace fk::collectives {

static_assert(sizeof(ncclUniqueId) == std::tuple_size_v<NcclUniqueIdBytes>,
              "NcclUniqueIdBytes must match NCCL_UNIQUE_ID_BYTES");

namespace {

using Clock = std::chrono::steady_clock;

// Spins briefly, then sleeps, so a long wait does not burn a core.
void backoff(Clock::time_point started) {
  if (Clock::now() - started < std::chrono::milliseconds(2))
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

ncclConfig_t nonblocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

}  // namespace

// ---- Impl -------------------------------------------------------------------------

NcclCommunicator::Impl::~Impl() {
  if (comm != nullptr && !aborted) {
    // Flush and release; fall back to abort if finalisation fails or hangs.
    int previous = -1;
    const bool have_device = cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
    const ncclResult_t finalized = ncclCommFinalize(comm);
    bool clean = finalized == ncclSuccess || finalized == ncclInProgress;
    const auto started = Clock::now();
    while (clean) {
      ncclResult_t state = ncclSuccess;
      if (ncclCommGetAsyncError(comm, &state) != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
        clean = false;
      } else if (state == ncclSuccess) {
        break;
      } else if (Clock::now() - started > options.timeout) {
        clean = false;
      } else {
        backoff(started);
      }
    }
    if (clean)
      ncclCommDestroy(comm);
    else
      ncclCommAbort(comm);
    if (have_device) cudaSetDevice(previous);
  }
  if (scratch != nullptr) cudaFree(scratch);
  if (owns_stream && stream != nullptr) cudaStreamDestroy(stream);
}

void NcclCommunicator::Impl::attach_stream(void* external, std::string_view op) {
  if (external != nullptr) {
    stream = static_cast<cudaStream_t>(external);
  } else {
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", op);
    owns_stream = true;
  }
  cuda_check(cudaMalloc(&scratch, 16), "cudaMalloc", op);
  cuda_check(cudaMemset(scratch, 0, 16), "cudaMemset", op);
}

void NcclCommunicator::Impl::require_usable(std::string_view op) const {
  if (aborted)
    fail(ErrorKind::kRuntime, "{}: the NCCL communicator ({}) was aborted after an earlier failure; build a new one",
         op, where());
}

void NcclCommunicator::Impl::abort() noexcept {
  if (comm != nullptr && !aborted) {
    ncclCommAbort(comm);
    aborted = true;
  }
}

std::string NcclCommunicator::Impl::where() const {
  return fmt::format("rank {} of {} on cuda:{}", rank, size, device);
}

void NcclCommunicator::Impl::wait_ready(ncclComm_t c, std::string_view op) {
  const auto started = Clock::now();
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(c, &state);
    if (r != ncclSuccess) {
      abort();
      nccl_check(r, "ncclCommGetAsyncError", op, nullptr);
    }
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) {
      const std::string message = fmt::format("{}: NCCL reported an asynchronous error on {}: {} — {}", op, where(),
                                              ncclGetErrorString(state), ncclGetLastError(c));
      abort();
      throw Error(ErrorKind::kRuntime, message);
    }
    if (Clock::now() - started > options.timeout) {
      abort();
      fail(ErrorKind::kTimeout, "{}: NCCL did not finish within {} ms on {} (a peer may have failed); aborted", op,
           options.timeout.count(), where());
    }
    backoff(started);
  }
}

void NcclCommunicator::Impl::complete(ncclResult_t r, std::string_view call, std::string_view op) {
  nccl_check(r, call, op, comm);
  wait_ready(comm, op);
}

void NcclCommunicator::Impl::group(std::string_view op, const std::function<void()>& body) {
  nccl_check(ncclGroupStart(), "ncclGroupStart", op, comm);
  try {
    body();
  } catch (...) {
    ncclGroupEnd();
    throw;
  }
  complete(ncclGroupEnd(), "ncclGroupEnd", op);
}

// ---- NcclCommunicator ---------------------------------------------------------------

NcclUniqueIdBytes NcclCommunicator::make_unique_id() {
  nccl_apply_env_policy();
  ncclUniqueId id;
  nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId", "nccl unique id", nullptr);
  NcclUniqueIdBytes out;
  std::memcpy(out.data(), &id, sizeof(id));
  return out;
}

NcclCommunicator::NcclCommunicator(int rank, int size, const NcclUniqueIdBytes& id, int device, void* stream,
                                   NcclOptions options)
    : impl_(std::make_unique<Impl>()) {
  if (size < 1) fail(ErrorKind::kInvalidArgument, "nccl init: size must be >= 1, got {}", size);
  validate_rank(rank, size, "nccl init", "rank");
  const int devices = cuda_device_count();
  if (device < 0 || device >= devices)
    fail(ErrorKind::kInvalidArgument, "nccl init: CUDA device {} does not exist ({} visible)", device, devices);
  nccl_apply_env_policy();
  Impl& s = *impl_;
  s.device = device;
  s.rank = rank;
  s.size = size;
  s.options = options;
  CudaDeviceGuard guard(device, "nccl init");
  s.attach_stream(stream, "nccl init");
  ncclUniqueId uid;
  std::memcpy(&uid, id.data(), sizeof(uid));
  ncclConfig_t config = nonblocking_config();
  const ncclResult_t r = ncclCommInitRankConfig(&s.comm, size, uid, rank, &config);
  try {
    s.complete(r, "ncclCommInitRankConfig", "nccl init");
  } catch (...) {
    s.abort();
    throw;
  }
}

NcclCommunicator::NcclCommunicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NcclCommunicator::~NcclCommunicator() = default;

int NcclCommunicator::device() const { return impl_->device; }
void* NcclCommunicator::stream() const { return impl_->stream; }
std::chrono::milliseconds NcclCommunicator::timeout() const { return impl_->options.timeout; }
int NcclCommunicator::rank() const { return impl_->rank; }
int NcclCommunicator::size() const { return impl_->size; }

bool NcclCommunicator::supports(DType, ReduceOp) const { return true; }

void NcclCommunicator::synchronize() {
  Impl& s = *impl_;
  s.require_usable("synchronize");
  CudaDeviceGuard guard(s.device, "synchronize");
  const auto started = Clock::now();
  for (;;) {
    const cudaError_t e = cudaStreamQuery(s.stream);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) {
      s.abort();
      cuda_check(e, "cudaStreamQuery", "synchronize");
    }
    ncclResult_t state = ncclSuccess;
    nccl_check(ncclCommGetAsyncError(s.comm, &state), "ncclCommGetAsyncError", "synchronize", s.comm);
    if (state != ncclSuccess && state != ncclInProgress) s.wait_ready(s.comm, "synchronize");  // aborts, throws
    if (Clock::now() - started > s.options.timeout) {
      s.abort();
      fail(ErrorKind::kTimeout,
           "synchronize: NCCL work on {} did not finish within {} ms (a peer may have failed or never joined); "
           "the communicator was aborted",
           s.where(), s.options.timeout.count());
    }
    backoff(started);
  }
  s.wait_ready(s.comm, "synchronize");
}

void NcclCommunicator::barrier() {
  Impl& s = *impl_;
  s.require_usable("barrier");
  {
    CudaDeviceGuard guard(s.device, "barrier");
    s.complete(ncclAllReduce(s.scratch, s.scratch, 1, ncclInt32, ncclSum, s.comm, s.stream), "ncclAllReduce",
               "barrier");
  }
  synchronize();
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  Impl& s = *impl_;
  s.require_usable("split");
  CudaDeviceGuard guard(s.device, "split");
  ncclConfig_t config = nonblocking_config();
  ncclComm_t child = nullptr;
  s.complete(ncclCommSplit(s.comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &child, &config), "ncclCommSplit",
             "split");
  if (child == nullptr) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->comm = child;
  impl->device = s.device;
  impl->options = s.options;
  impl->rank = -1;
  impl->size = -1;
  impl->wait_ready(child, "split");
  nccl_check(ncclCommUserRank(child, &impl->rank), "ncclCommUserRank", "split", child);
  nccl_check(ncclCommCount(child, &impl->size), "ncclCommCount", "split", child);
  impl->attach_stream(nullptr, "split");
  return std::unique_ptr<Communicator>(new NcclCommunicator(std::move(impl)));
}

std::unique_ptr<NcclCommunicator> nccl_from_mpi(Communicator& bootstrap, int device, void* stream,
                                                NcclOptions options) {
  if (bootstrap.backend() != "mpi")
    fail(ErrorKind::kInvalidArgument, "nccl_from_mpi: the bootstrap communicator must be host memory (mpi), got {}",
         bootstrap.backend());
  // Byte 0 says whether rank 0 made an id, so a failure there cannot leave others waiting.
  std::array<std::byte, 1 + std::tuple_size_v<NcclUniqueIdBytes>> message{};
  std::string rank0_error;
  if (bootstrap.rank() == 0) {
    try {
      const NcclUniqueIdBytes id = NcclCommunicator::make_unique_id();
      std::memcpy(message.data() + 1, id.data(), id.size());
      message[0] = std::byte{1};
    } catch (const Error& e) {
      rank0_error = e.what();
    }
  }
  bootstrap.broadcast(message.data(), message.size(), DType::kU8, 0);
  if (message[0] != std::byte{1})
    fail(ErrorKind::kRuntime, "nccl_from_mpi: rank 0 could not create the NCCL unique id{}{}",
         rank0_error.empty() ? "" : ": ", rank0_error);
  NcclUniqueIdBytes id;
  std::memcpy(id.data(), message.data() + 1, id.size());
  return std::make_unique<NcclCommunicator>(bootstrap.rank(), bootstrap.size(), id, device, stream, options);
}

}  // namespace fk::collectives
