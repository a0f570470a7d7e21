// GPU test (label gpu): the Communicator contract on the NCCL backend, one thread per
// visible device in one process (no mpirun): every operation x dtype x count through
// device buffers, split, the bandwidth probe with device buffers, and the timeout path
// (a receive nobody answers becomes fk::Error(kTimeout), then kRuntime on reuse), and
// nccl_from_mpi over an in-process host bootstrap.
// Runs only on a machine with a GPU; a machine without one fails the test.
#include "collectives/bandwidth_probe.h"
#include "collectives/nccl_communicator.h"
#include "collectives/probe_format.h"
#include "conformance.h"
#include "device_space.h"
#include "core/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

namespace fk::collectives {
namespace {

namespace cf = conformance;
using testing::DeviceSpace;

// Runs `body` on ranks 0..n-1, one thread and device each, every rank with its own
// NcclCommunicator built from one unique id. Exceptions become failures.
void on_gpus(int n, const std::function<void(NcclCommunicator&)>& body, NcclOptions options = {}) {
  const NcclUniqueIdBytes id = NcclCommunicator::make_unique_id();
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        NcclCommunicator comm(r, n, id, r, nullptr, options);
        body(comm);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << r << " of " << n << ": " << e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

class NcclGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    devices_ = cuda_device_count();
    ASSERT_GT(devices_, 0) << "gpu-labelled tests need a CUDA device";
  }
  // 1 and every device.
  std::vector<int> sizes() const { return devices_ > 1 ? std::vector<int>{1, devices_} : std::vector<int>{1}; }
  int devices_ = 0;
};

TEST_F(NcclGpu, EnvPolicyKeepsNvlsOff) {
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  on_gpus(1, [](NcclCommunicator& c) { EXPECT_EQ(c.size(), 1); });
  const char* v = std::getenv("NCCL_NVLS_ENABLE");
  ASSERT_NE(v, nullptr);
  EXPECT_STREQ(v, "0");
}

TEST_F(NcclGpu, EveryOperationDtypeAndCount) {
  for (int n : sizes()) {
    on_gpus(n, [](NcclCommunicator& c) {
      DeviceSpace ds(c.device());
      BufferSpace& space = *ds.space;
      EXPECT_EQ(c.backend(), "nccl");
      for (DType t : cf::reduction_dtypes())
        for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax})
          for (size_t count : cf::test_counts()) {
            cf::check_all_reduce(c, space, t, op, count, false);
            cf::check_all_reduce(c, space, t, op, count, true);
            cf::check_reduce_scatter(c, space, t, op, count);
          }
      for (DType t : cf::movement_dtypes()) {
        for (size_t count : cf::test_counts()) {
          cf::check_all_gather(c, space, t, count);
          cf::check_all_to_all(c, space, t, count);
          cf::check_broadcast(c, space, t, count, c.size() - 1);
          cf::check_send_recv_combined(c, space, t, count);
          if (c.size() >= 2) cf::check_send_recv_ring(c, space, t, count);
        }
        cf::check_all_to_allv(c, space, t, 0);
        cf::check_all_to_allv(c, space, t, 5);
      }
      c.barrier();
    });
  }
}

TEST_F(NcclGpu, Split) {
  for (int n : sizes()) on_gpus(n, [](NcclCommunicator& c) {
    DeviceSpace ds(c.device());
    cf::check_split(c, *ds.space);
  });
}

TEST_F(NcclGpu, ProbeSweepWithDeviceBuffers) {
  for (int n : sizes()) {
    on_gpus(n, [](NcclCommunicator& c) {
      for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
        ProbeOptions o;
        o.dtype = t;
        o.min_bytes = 8;
        o.max_bytes = 1 << 22;
        o.step_factor = 8;
        o.warmup_iters = 2;
        o.iters = 5;
        o.check_runs = 2;
        DeviceSpace ds(c.device());
        const std::vector<ProbeRow> rows = probe_run(c, o, *ds.space);
        EXPECT_EQ(rows.size(), 6u * 7u);  // 8 B .. 2 MiB, factor 8
        for (const ProbeRow& r : rows) EXPECT_EQ(r.wrong, 0) << probe_format_table({r});
        if (c.rank() == 0) std::printf("%s", probe_format_table(rows).c_str());
      }
    });
  }
}

TEST_F(NcclGpu, UnansweredReceiveTimesOutThenRefusesWork) {
  // Rank 0 waits for a message rank 1 (or, alone, rank 0 itself) never sends; rank 1
  // stays alive (its communicator intact) until rank 0 has seen the timeout.
  const int n = devices_ > 1 ? 2 : 1;
  NcclOptions options;
  options.timeout = std::chrono::milliseconds(3000);
  std::atomic<bool> rank0_done{false};
  on_gpus(
      n,
      [n, &rank0_done](NcclCommunicator& c) {
        if (c.rank() != 0) {
          while (!rank0_done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
          return;
        }
        DeviceSpace ds(c.device());
        SpaceBuffer buf(*ds.space, 64);
        ErrorKind kind = ErrorKind::kInternal;
        std::string message;
        const auto started = std::chrono::steady_clock::now();
        try {
          c.recv(buf.data(), 16, DType::kF32, n - 1, 0);
          c.synchronize();
        } catch (const Error& e) {
          kind = e.kind();
          message = e.what();
        }
        const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (n == 2) {
          EXPECT_EQ(kind, ErrorKind::kTimeout) << message;
          EXPECT_NE(message.find("did not finish within 3000 ms"), std::string::npos) << message;
          EXPECT_GE(waited, 3.0);
        } else {
          // Alone on one GPU, NCCL (2.28) refuses a receive from self at once ("invalid
          // usage"); older versions let it time out. Either way: an error naming recv.
          EXPECT_TRUE(kind == ErrorKind::kTimeout || kind == ErrorKind::kRuntime) << message;
          EXPECT_NE(message.find("recv"), std::string::npos) << message;
        }
        EXPECT_LT(waited, 30.0);
        try {
          c.barrier();
          ADD_FAILURE() << "an aborted communicator accepted work";
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
          EXPECT_NE(std::string(e.what()).find("aborted"), std::string::npos) << e.what();
        }
        rank0_done = true;
      },
      options);
}

// A host-memory stand-in for the MPI bootstrap inside one process: threads share a
// buffer for broadcast (the only call nccl_from_mpi makes); everything else throws.
class ThreadBootstrap final : public Communicator {
 public:
  struct Shared {
    explicit Shared(int n) : sync(n) {}
    std::barrier<> sync;
    std::vector<std::byte> data;
  };
  ThreadBootstrap(Shared& shared, int rank, int size) : shared_(shared), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }
  bool supports(DType, ReduceOp) const override { return false; }
  void broadcast(void* buffer, size_t count, DType dtype, int root) override {
    const size_t bytes = count * dtype_size(dtype);
    if (rank_ == root) shared_.data.assign(static_cast<std::byte*>(buffer), static_cast<std::byte*>(buffer) + bytes);
    shared_.sync.arrive_and_wait();
    if (rank_ != root) std::copy(shared_.data.begin(), shared_.data.end(), static_cast<std::byte*>(buffer));
    shared_.sync.arrive_and_wait();
  }
  void all_reduce(const void*, void*, size_t, DType, ReduceOp) override { unused(); }
  void all_gather(const void*, void*, size_t, DType) override { unused(); }
  void reduce_scatter(const void*, void*, size_t, DType, ReduceOp) override { unused(); }
  void all_to_all(const void*, void*, size_t, DType) override { unused(); }
  void all_to_allv(const void*, const std::vector<size_t>&, const std::vector<size_t>&, void*,
                   const std::vector<size_t>&, const std::vector<size_t>&, DType) override {
    unused();
  }
  void send(const void*, size_t, DType, int, int) override { unused(); }
  void recv(void*, size_t, DType, int, int) override { unused(); }
  void send_recv(const void*, size_t, int, void*, size_t, int, DType, int) override { unused(); }
  void barrier() override { shared_.sync.arrive_and_wait(); }
  void synchronize() override {}
  std::unique_ptr<Communicator> split(int, int) override {
    unused();
    return nullptr;
  }

 private:
  [[noreturn]] static void unused() { throw Error(ErrorKind::kUnsupported, "ThreadBootstrap: broadcast only"); }
  Shared& shared_;
  int rank_, size_;
};

TEST_F(NcclGpu, FromMpiBootstrapsOverAHostCommunicator) {
  const int n = devices_;
  ThreadBootstrap::Shared shared(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        ThreadBootstrap boot(shared, r, n);
        std::unique_ptr<NcclCommunicator> c = nccl_from_mpi(boot, r);
        EXPECT_EQ(c->rank(), r);
        EXPECT_EQ(c->size(), n);
        DeviceSpace ds(c->device());
        for (DType t : {DType::kF32, DType::kBF16})
          for (size_t count : cf::test_counts())
            cf::check_all_reduce(*c, *ds.space, t, ReduceOp::kSum, count, false);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << r << ": " << e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // A device communicator is not a valid bootstrap.
  on_gpus(1, [](NcclCommunicator& c) {
    try {
      nccl_from_mpi(c, 0);
      ADD_FAILURE() << "an nccl bootstrap was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    }
  });
}

TEST_F(NcclGpu, BadArgumentsAreInvalidArgument) {
  on_gpus(1, [](NcclCommunicator& c) {
    DeviceSpace ds(c.device());
    SpaceBuffer buf(*ds.space, 64);
    EXPECT_THROW(c.recv(buf.data(), 1, DType::kF32, 1, 0), Error);
    try {
      c.send(buf.data(), 1, DType::kF32, 0, -1);
      ADD_FAILURE() << "negative tag accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    }
    c.barrier();  // still usable
  });
  EXPECT_THROW(NcclCommunicator(0, 1, NcclCommunicator::make_unique_id(), devices_), Error);
  EXPECT_THROW(NcclCommunicator(1, 1, NcclCommunicator::make_unique_id(), 0), Error);
}

}  // namespace
}  // namespace fk::collectives
