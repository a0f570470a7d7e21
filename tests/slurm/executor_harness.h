// A SlurmExecutor on a FakeSlurmClient, driven by the test: fast polls (1 ms), the
// fake's clock (one simulated second per query), attempt folders in a fresh temporary
// folder, and a helper that runs one attempt to its end and checks `done` fired once.
#pragma once

#include "orchestrator/slurm/fake_slurm_client.h"
#include "orchestrator/slurm/slurm_executor.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace fk::orchestrator::testing {

inline std::string fresh_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(FK_BINARY_DIR) / "tests" / "slurm" / "tmp" / name /
                                    (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct ExecutorHarness {
  boost::asio::io_context io;
  std::shared_ptr<FakeSlurmClient> fake = std::make_shared<FakeSlurmClient>();
  std::string dir = fresh_dir("unit");
  SlurmExecutorOptions options;
  std::unique_ptr<SlurmExecutor> executor;

  ExecutorHarness() {
    options.poll_interval_s = 0.001;
    options.submit_retry_delay_s = 0.001;
    options.template_file = std::string(FK_SOURCE_DIR) + "/slurm/templates/attempt.sbatch";
    options.attempts_dir = dir + "/attempts";
    options.script.runner = "/opt/fk/bin/fk-runner";
    options.clock = [f = fake.get()] { return f->now(); };
  }
  SlurmExecutor& start() {
    if (!executor) executor = std::make_unique<SlurmExecutor>(io, fake, options);
    return *executor;
  }

  LaunchRequest request(const std::string& attempt = "job1.a1", int ranks = 2, double time_limit_s = 600) const {
    LaunchRequest r;
    r.attempt_id = attempt;
    r.job_ids = {attempt.substr(0, attempt.find('.'))};
    r.jobs_file = dir + "/jobs.json";
    r.results_dir = dir + "/results";
    r.ranks = ranks;
    r.time_limit_s = time_limit_s;
    r.log_file = dir + "/logs/" + attempt + ".log";
    return r;
  }

  // Launches `r` (after `before_run`, if any, which may cancel it), runs the io_context
  // until nothing is left, and returns the one result.
  AttemptResult run(const LaunchRequest& r, const std::function<void()>& before_run = {}) {
    std::optional<AttemptResult> result;
    int calls = 0;
    start().launch(r, [&](const AttemptResult& res) {
      result = res;
      ++calls;
    });
    if (before_run) before_run();
    io.run_for(std::chrono::seconds(20));
    io.restart();
    EXPECT_EQ(calls, 1) << "done must fire exactly once";
    EXPECT_TRUE(result.has_value()) << "the attempt never ended";
    return result.value_or(AttemptResult{});
  }

  // Runs the io_context until `pred` holds (or 10 s pass).
  bool run_until(const std::function<bool()>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred() && std::chrono::steady_clock::now() < deadline) {
      io.run_for(std::chrono::milliseconds(1));
      if (io.stopped()) io.restart();
    }
    return pred();
  }
};

}  // namespace fk::orchestrator::testing
