// The sandboxed worker and its sandbox, tested directly: the sandbox layers in a forked
// child (forbidden calls kill it with SIGSYS, reads and writes outside its folders are
// refused, threads still work), the baseline worker through the arena channel against
// the in-process baseline (bit for bit), and the supervisor's view of a worker that
// ends: described, reaped, no further answers.
#include "core/error.h"
#include "core/rng.h"
#include "kernels/candidate/sandbox.h"
#include "kernels/candidate/worker.h"
#include "kernels/fk_kernel.h"
#include "kernels/op.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fk::kernels {
namespace {
namespace fs = std::filesystem;

// Runs `body` in a forked child inside the sandbox; returns its wait status.
int in_sandbox(const sandbox::Policy& p, const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      sandbox::sandbox_enter(p);
    } catch (...) {
      _exit(90);
    }
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

sandbox::Policy policy_with_scratch(const std::string& scratch) {
  sandbox::Policy p;
  p.read_paths = sandbox::system_read_paths();
  p.write_paths = {scratch};
  return p;
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = fs::temp_directory_path() / fmt::format("fk-sandbox-test-{}", getpid());
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }
  fs::path scratch_;
};

TEST_F(SandboxTest, ForbiddenCallsKillWithSigsys) {
  const auto p = policy_with_scratch(scratch_.string());
  for (const auto& [what, body] : std::vector<std::pair<std::string, std::function<int()>>>{
           {"fork", [] { return fork() >= 0 ? 1 : 2; }},
           {"execve", [] {
              char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
              execve("/bin/true", argv, nullptr);
              return 3;
            }},
           {"inet socket", [] { return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 4 : 5; }},
           {"kill of the parent", [] { return kill(getppid(), 0) == 0 ? 6 : 7; }}}) {
    const int status = in_sandbox(p, body);
    ASSERT_TRUE(WIFSIGNALED(status)) << what << ": exited " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), SIGSYS) << what;
  }
}

TEST_F(SandboxTest, FilesOutsideItsFoldersAreRefusedThreadsWork) {
  const auto p = policy_with_scratch(scratch_.string());
  const std::string inside = (scratch_ / "ok.txt").string();
  const std::string outside = (scratch_.parent_path() / fmt::format("fk-sandbox-escape-{}", getpid())).string();
  const int status = in_sandbox(p, [&] {
    const int fd = open(inside.c_str(), O_WRONLY | O_CREAT, 0600);
    if (fd < 0 || write(fd, "x", 1) != 1) return 10;
    close(fd);
    if (open(outside.c_str(), O_WRONLY | O_CREAT, 0600) >= 0) return 11;
    if (open("/etc/hostname", O_RDONLY) >= 0 && fs::exists("/etc/hostname")) return 12;
    if (open("/usr/include/stdio.h", O_RDONLY) < 0 && fs::exists("/usr/include/stdio.h")) return 13;
    int seen = 0;
    std::thread t([&] { seen = 1; });
    t.join();
    return seen == 1 ? 0 : 14;
  });
  ASSERT_TRUE(WIFEXITED(status)) << "killed by " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 scratch write, 11 write outside, 12 read outside, 13 system read, 14 thread";
  EXPECT_FALSE(fs::exists(outside));
}

// The CPU of a worker's threads other than the serving one: exact from the live
// threads' counts; from the process time (threads that ended between the readings)
// only beyond the two readings' clock-tick rounding; never negative.
TEST(WorkerCpuTest, OffMainCpuIsTheOtherThreadsBeyondTheTickRounding) {
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  WorkerCpu before, after;
  before.live_threads_s = 1.0;
  before.main_thread_s = 0.9;
  before.process_s = 1.0;
  // The serving thread alone worked 50 ms; the process time, in ticks, read one tick more.
  after.live_threads_s = 1.05;
  after.main_thread_s = 0.95;
  after.process_s = 1.05 + tick;
  EXPECT_NEAR(WorkerCpu::used(before, after), 0.05 + tick, 1e-12);
  EXPECT_NEAR(WorkerCpu::used_off_main(before, after), 0.0, 1e-12);
  // A live helper thread worked 30 ms beside it.
  after.live_threads_s = 1.08;
  after.process_s = 1.08;
  EXPECT_NEAR(WorkerCpu::used_off_main(before, after), 0.03, 1e-12);
  // A helper that ended before the second reading: gone from the live sum, seen in the
  // process time beyond two ticks.
  after.live_threads_s = 1.05;
  after.process_s = 1.05 + 0.04 + 2 * tick;
  EXPECT_NEAR(WorkerCpu::used_off_main(before, after), 0.04, 1e-12);
}

TEST(WorkerTest, BaselineWorkerMatchesTheInProcessBaselineBitForBit) {
  register_builtin_ops();
  WorkerConfig c;
  c.executable = worker_executable_path();
  c.name = "baseline";
  c.op = "rms_norm";
  Worker w(c);
  EXPECT_NE(w.sandbox().find("seccomp"), std::string::npos) << w.sandbox();
  const auto loaded = w.load();
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded->code, FK_OK) << loaded->message;
  const OpDef& def = OpRegistry::global().def("rms_norm");
  const OpCall host = def.make(OpShape{{{"tokens", 37}, {"hidden", 96}}, {1e-5}}, DType::kBF16, RngStream(7, "w"));
  OpCall remote;
  remote.params = host.params;
  for (const Tensor& t : host.args) {
    Tensor r = w.alloc(t.dtype(), t.shape());
    std::memcpy(r.data(), t.data(), t.nbytes());
    remote.args.push_back(r);
  }
  const auto reply = w.call("rms_norm", remote);
  ASSERT_TRUE(reply) << w.failure();
  EXPECT_EQ(reply->code, FK_OK) << reply->message;
  EXPECT_GT(reply->seconds, 0);
  OpRegistry::global().impl("rms_norm", "cpu").run(host);
  EXPECT_EQ(std::memcmp(host.args[0].data(), remote.args[0].data(), host.args[0].nbytes()), 0);
  // A descriptor outside the arena is refused by the supervisor before it is sent.
  OpCall bad = remote;
  bad.args[0] = host.args[0];
  EXPECT_THROW(w.call("rms_norm", bad), Error);
  // An unknown op is refused by the worker, which keeps serving.
  const auto unknown = w.call("no_such_op", remote);
  ASSERT_TRUE(unknown) << w.failure();
  EXPECT_NE(unknown->code, FK_OK);
  const auto again = w.call("rms_norm", remote);
  ASSERT_TRUE(again) << w.failure();
  EXPECT_EQ(again->code, FK_OK);
  w.kill();
  EXPECT_FALSE(w.alive());
  EXPECT_FALSE(w.call("rms_norm", remote).has_value());
}

TEST(WorkerTest, AWorkerThatCannotLoadItsLibraryAnswersWithTheReason) {
  register_builtin_ops();
  WorkerConfig c;
  c.executable = worker_executable_path();
  c.library = "/nonexistent/candidate.so";
  c.name = "missing";
  c.op = "rms_norm";
  c.entry = "fk_candidate_rms_norm";
  Worker w(c);
  const auto loaded = w.load();
  ASSERT_TRUE(loaded) << w.failure();
  EXPECT_NE(loaded->code, FK_OK);
  EXPECT_NE(loaded->message.find("cannot load"), std::string::npos) << loaded->message;
}

TEST(WorkerTest, AMissingWorkerExecutableIsAClearError) {
  WorkerConfig c;
  c.executable = "/nonexistent/fk-candidate-worker";
  c.time_limit_s = 5;
  try {
    Worker w(c);
    FAIL() << "started";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did not start"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fk::kernels
