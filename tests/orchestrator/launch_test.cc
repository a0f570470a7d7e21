// The mpirun command line of a local attempt: jobs on a device start unbound (their host
// threads are many), CPU jobs keep Open MPI's binding.
#include "orchestrator/launch.h"
#include "orchestrator/heartbeat.h"
#include "orchestrator/local_executor.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fk::orchestrator {
namespace {

bool has_bind_none(const std::vector<std::string>& cmd) {
  const auto it = std::find(cmd.begin(), cmd.end(), "--bind-to");
  return it != cmd.end() && it + 1 != cmd.end() && *(it + 1) == "none";
}

TEST(Launch, DeviceJobsStartUnboundCpuJobsKeepTheBinding) {
  LaunchOptions o;
  o.ranks = 2;
  o.jobs_file = "jobs.json";
  o.results_dir = "out";
  o.runner_args = {"--only", "a"};
  const auto cpu = launch_command(o);
  EXPECT_FALSE(has_bind_none(cpu));
  o.unbound = true;
  const auto dev = launch_command(o);
  EXPECT_TRUE(has_bind_none(dev));
  // The options come before fk-runner, its arguments after.
  const auto runner = std::find(dev.begin(), dev.end(), runner_path());
  ASSERT_NE(runner, dev.end());
  EXPECT_LT(std::find(dev.begin(), dev.end(), "--bind-to"), runner);
  EXPECT_EQ(dev.back(), "a");
  EXPECT_EQ(dev[1], "-np");
  EXPECT_EQ(dev[2], "2");
}

// fk-runner beats five times per silence window (at most every 2 s, at least every
// 0.2 s), so one beat delayed on a busy node does not stop a working attempt.
TEST(Launch, HeartbeatIntervalFollowsTheTimeout) {
  EXPECT_DOUBLE_EQ(heartbeat_interval_for(600), 2.0);
  EXPECT_DOUBLE_EQ(heartbeat_interval_for(5), 1.0);
  EXPECT_DOUBLE_EQ(heartbeat_interval_for(0.5), 0.2);
  EXPECT_DOUBLE_EQ(heartbeat_interval_for(0), 0.0);  // no watch: fk-runner's default
  LaunchRequest r;
  r.attempt_id = "a.a1";
  r.job_ids = {"a"};
  r.jobs_file = "jobs.json";
  r.results_dir = "out";
  r.heartbeat = "127.0.0.1:9";
  r.heartbeat_interval_s = heartbeat_interval_for(5);
  const auto cmd = LocalExecutor::command(r);
  const auto it = std::find(cmd.begin(), cmd.end(), "--heartbeat-interval");
  ASSERT_NE(it, cmd.end());
  ASSERT_NE(it + 1, cmd.end());
  EXPECT_EQ(*(it + 1), "1");
  r.heartbeat.clear();  // no listener: no heartbeat arguments at all
  const auto quiet = LocalExecutor::command(r);
  EXPECT_EQ(std::find(quiet.begin(), quiet.end(), "--heartbeat-interval"), quiet.end());
}

}  // namespace
}  // namespace fk::orchestrator
