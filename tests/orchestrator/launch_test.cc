// The mpirun command line of a local attempt: jobs on a device start unbound (their host
// threads are many), CPU jobs keep Open MPI's binding.
#include "orchestrator/launch.h"

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

}  // namespace
}  // namespace fk::orchestrator
