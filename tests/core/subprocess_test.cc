// core/subprocess: a child never runs the caller's signal handlers (a SIGTERM that
// reaches it between fork and exec must not look like the caller's own SIGTERM), and it
// starts with the caller's signal mask, not the all-blocked mask used across the fork.
#include "core/subprocess.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <csignal>
#include <fstream>
#include <string>

namespace fk {
namespace {

int g_self_pipe[2] = {-1, -1};

// What an Asio signal_set does: the handler writes to the process's self-pipe.
void on_sigterm(int) {
  const char c = 'T';
  (void)!write(g_self_pipe[1], &c, 1);
}

void raise_sigterm() { raise(SIGTERM); }

// "SigBlk:\t..." of this thread (the mask a child forked from here inherits).
std::string status_line(const std::string& key) {
  std::ifstream in(fmt::format("/proc/self/task/{}/status", gettid()));
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return line;
  return "";
}

class SubprocessSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(pipe(g_self_pipe), 0);
    fcntl(g_self_pipe[0], F_SETFL, O_NONBLOCK);
    struct sigaction sa = {};
    sa.sa_handler = on_sigterm;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGTERM, &sa, &old_), 0);
  }
  void TearDown() override {
    sigaction(SIGTERM, &old_, nullptr);
    close(g_self_pipe[0]);
    close(g_self_pipe[1]);
  }
  // Bytes the handler wrote (in this process or in a child that inherited it).
  std::string self_pipe() {
    std::string out;
    char buf[64];
    for (ssize_t n; (n = read(g_self_pipe[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
    return out;
  }
  struct sigaction old_ = {};
};

TEST_F(SubprocessSignals, SignalBeforeExecTakesTheDefaultActionInTheChild) {
  SubprocessOptions o;
  o.test_after_fork = raise_sigterm;  // SIGTERM arrives in the child before exec
  const SubprocessResult r = subprocess_run({"sh", "-c", "exit 0"}, o);
  EXPECT_EQ(self_pipe(), "") << "the child ran the parent's SIGTERM handler";
  EXPECT_EQ(r.signal, SIGTERM) << r.describe();
}

TEST_F(SubprocessSignals, ChildStartsWithTheCallersMask) {
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr1, &old), 0);
  const std::string mine = status_line("SigBlk:");
  const SubprocessResult r = subprocess_run({"grep", "^SigBlk:", "/proc/self/status"});
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(r.ok()) << r.describe();
  ASSERT_NE(mine.find("200"), std::string::npos) << "SIGUSR1 (bit 9) blocked here: " << mine;
  EXPECT_NE(r.output.find(mine), std::string::npos) << "the caller's mask, not every signal blocked: " << r.output;
  // The parent's own mask is as it was, and its handler still works.
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, nullptr, &now);
  EXPECT_FALSE(sigismember(&now, SIGTERM));
  raise(SIGTERM);
  EXPECT_EQ(self_pipe(), "T");
}

}  // namespace
}  // namespace fk
