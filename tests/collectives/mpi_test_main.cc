// main() of the multi-rank test binary: MPI_Init, GoogleTest on every rank (rank 0
// prints the usual report, other ranks print only their failures, prefixed with the
// rank), a watchdog that turns a hang into a visible failure, and an exit status that
// is non-zero on every rank when any rank failed.
#include "collectives/mpi_communicator.h"
#include "mpi_test_env.h"

#include <mpi.h>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fk::collectives::testing {

namespace {

std::unique_ptr<Communicator> g_world;
int g_rank = 0;

// Prints this rank's failed assertions and tests (ranks other than 0).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", g_rank, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed())
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", g_rank, info.test_suite_name(), info.name());
  }
};

// Ends the process when one test (or the final exchange) runs past the limit.
class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  explicit Watchdog(int seconds) : seconds_(seconds), thread_([this] { loop(); }) {}
  ~Watchdog() override {
    stop_ = true;
    thread_.join();
  }
  void arm(const std::string& what) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      what_ = what;
    }
    deadline_ = now_s() + seconds_;
  }
  void disarm() { deadline_ = 0; }
  void OnTestStart(const ::testing::TestInfo& info) override {
    arm(std::string(info.test_suite_name()) + "." + info.name());
  }
  void OnTestEnd(const ::testing::TestInfo&) override { disarm(); }

 private:
  static int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void loop() {
    while (!stop_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const int64_t d = deadline_;
      if (d != 0 && now_s() > d) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::fprintf(stderr,
                     "[rank %d] WATCHDOG: %s ran longer than %d s; a rank probably failed and left a collective. "
                     "Exiting with status 3.\n",
                     g_rank, what_.c_str(), seconds_);
        std::fflush(stderr);
        _exit(3);
      }
    }
  }
  int seconds_;
  std::atomic<int64_t> deadline_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string what_;
  std::thread thread_;
};

}  // namespace

Communicator& world() { return *g_world; }

void MpiTest::TearDown() {
  const int mine = HasFailure() ? 1 : 0;
  std::vector<int> all(static_cast<size_t>(world().size()));
  MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (mine) return;
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r]) ADD_FAILURE() << "this test failed on rank " << r << " (see that rank's output)";
}

}  // namespace fk::collectives::testing

int main(int argc, char** argv) {
  using namespace fk::collectives::testing;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (g_rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter);
  }
  const char* limit = std::getenv("FK_MPI_TEST_WATCHDOG_S");
  auto* watchdog = new Watchdog(limit != nullptr ? std::atoi(limit) : 120);
  listeners.Append(watchdog);  // owned by gtest

  int rc = 1;
  try {
    g_world = fk::collectives::mpi_world();
    rc = RUN_ALL_TESTS();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[rank %d] test setup failed: %s\n", g_rank, e.what());
  }
  watchdog->arm("the final exchange of results");
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  watchdog->disarm();
  if (worst != 0 && rc == 0) std::fprintf(stderr, "[rank %d] tests failed on another rank\n", g_rank);
  g_world.reset();
  MPI_Finalize();
  return worst != 0 ? 1 : 0;
}
