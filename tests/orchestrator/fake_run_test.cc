// fk run's orchestration against the fake executor: packing onto capacity, retries,
// giving up, drop-and-retry of crashing candidates, resume from the journal, and the
// job files' content hashes (recorded when accepted, checked before a job counts as
// done: a replaced or damaged file is moved aside and its job runs again).
#include "orchestrator/fake_executor.h"
#include "orchestrator/journal.h"
#include "orchestrator/run.h"
#include "results/h5/file_sum.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <unistd.h>

namespace fk::orchestrator {
namespace {
namespace fs = std::filesystem;

class FakeRun : public ::testing::Test {
 protected:
  void SetUp() override {
    specs_.write("architectures/m.yaml", testing::base_architecture_yaml());
    specs_.write("workloads/w.yaml", "kind: workload\nname: w\nphase: prefill\nbatch: 4\nseq_len: 8\n");
    campaign_ = specs_.write("campaigns/c.yaml",
                             "kind: campaign\nname: c\nscale: tiny\narchitectures: [m]\nworkloads: [w]\n"
                             "layouts: [tp1, tp2, pp2, tp2pp2]\nrepetitions: 2\nexecutor: {retries: 2}\n");
    results_ = specs_.root() + "/results";
  }
  int run(std::function<FakeOutcome(const std::string&, int)> script, int capacity, bool resume = false,
          int* peak = nullptr) {
    RunOptions o;
    o.campaign_file = campaign_;
    o.results_dir = results_;
    o.resume = resume;
    o.plain = true;
    o.make_executor = [&](boost::asio::io_context& io) {
      auto e = std::make_unique<FakeExecutor>(io, capacity, script);
      executor_ = e.get();
      return e;
    };
    (void)peak;
    return run_campaign(o);
  }
  std::vector<nlohmann::json> journal() const { return Journal::read(results_ + "/.fk-journal.jsonl"); }
  int count(const std::string& event, const std::string& decision = "") const {
    int n = 0;
    for (const auto& e : journal())
      if (e.value("event", "") == event && (decision.empty() || e.value("decision", "") == decision)) ++n;
    return n;
  }
  int files() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(results_)) n += e.path().extension() == ".h5";
    return n;
  }
  testing::TempSpecs specs_;
  std::string campaign_, results_;
  FakeExecutor* executor_ = nullptr;
};

TEST_F(FakeRun, RunsEveryJobOnceWhenAllSucceed) {
  EXPECT_EQ(run([](const std::string&, int) { return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001}; }, 4), 0);
  EXPECT_EQ(files(), 8);
  EXPECT_EQ(count("launch"), 8);
  EXPECT_EQ(count("end", "done"), 8);
  EXPECT_EQ(count("finished"), 1);
}

TEST_F(FakeRun, RetriesThenGivesUp) {
  // Odd attempts fail, except that one job always fails.
  std::string doomed;
  auto script = [&](const std::string& job, int attempt) {
    if (doomed.empty()) doomed = job;
    if (job == doomed) return FakeOutcome{AttemptEnd::kFailed, 3, 0.001};
    return attempt == 0 ? FakeOutcome{AttemptEnd::kFailed, 3, 0.001} : FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001};
  };
  EXPECT_EQ(run(script, 4), 1);
  EXPECT_EQ(files(), 7);
  EXPECT_EQ(count("end", "give_up"), 1);
  EXPECT_EQ(count("end", "retry"), 7 + 2);  // one retry each for 7 jobs, two for the doomed one
}

TEST_F(FakeRun, BadInputIsNotRetried) {
  EXPECT_EQ(run([](const std::string&, int) { return FakeOutcome{AttemptEnd::kFailed, 2, 0.001}; }, 4), 1);
  EXPECT_EQ(count("launch"), 8);
  EXPECT_EQ(count("end", "give_up"), 8);
}

TEST_F(FakeRun, JobsLargerThanCapacityAreRefusedUpFront) {
  EXPECT_EQ(run([](const std::string&, int) { return FakeOutcome{}; }, 2), 2);  // tp2pp2 needs 4
  EXPECT_EQ(count("launch"), 0);
}

TEST_F(FakeRun, ResumeRunsOnlyWhatIsLeft) {
  EXPECT_EQ(run([](const std::string&, int) { return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001}; }, 4), 0);
  // Lose three job files (as if their attempts had died with the orchestrator).
  int removed = 0;
  for (const auto& e : fs::directory_iterator(results_))
    if (e.path().extension() == ".h5" && removed < 3) {
      fs::remove(e.path());
      ++removed;
    }
  EXPECT_EQ(run([](const std::string&, int) { return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001}; }, 4), 2)
      << "without --resume an existing journal is refused";
  EXPECT_EQ(run([](const std::string&, int) { return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001}; }, 4, true), 0);
  EXPECT_EQ(files(), 8);
  EXPECT_EQ(executor_->launches(), 3);
}

// The job files of results_, by job id.
std::vector<std::string> job_ids_of(const std::string& results) {
  std::vector<std::string> ids;
  for (const auto& e : fs::directory_iterator(results))
    if (e.path().extension() == ".h5") ids.push_back(e.path().stem().string());
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST_F(FakeRun, JournalRecordsTheContentHashOfEveryAcceptedFile) {
  EXPECT_EQ(run([](const std::string&, int) { return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001}; }, 4), 0);
  const std::map<std::string, std::string> hashes = Journal::job_hashes(journal());
  ASSERT_EQ(hashes.size(), 8u);
  for (const auto& [id, hash] : hashes) {
    EXPECT_EQ(hash, h5::file_sum_check(results_ + "/" + id + ".h5").hash) << id;
    EXPECT_EQ(hash.rfind("fnv1a64:", 0), 0u) << hash;
  }
}

TEST_F(FakeRun, ResumeRunsAgainJobsWhoseFilesWereReplacedOrDamaged) {
  auto ok = [](const std::string&, int) { return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001}; };
  EXPECT_EQ(run(ok, 4), 0);
  const std::vector<std::string> ids = job_ids_of(results_);
  ASSERT_EQ(ids.size(), 8u);
  // One file replaced by another, intact one (a different job's result under its name),
  // one damaged in place; the others untouched.
  const std::string replaced = results_ + "/" + ids[1] + ".h5", damaged = results_ + "/" + ids[5] + ".h5";
  std::ofstream(replaced, std::ios::trunc) << "another job's result\n";
  std::fstream(damaged, std::ios::in | std::ios::out | std::ios::binary).put('F');
  std::vector<std::string> launched;
  auto again = [&](const std::string& job, int) {
    launched.push_back(job);
    return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001};
  };
  EXPECT_EQ(run(again, 4, true), 0);
  std::sort(launched.begin(), launched.end());
  EXPECT_EQ(launched, (std::vector<std::string>{ids[1], ids[5]}));
  // Moved aside, not deleted; the jobs' new files are in place and accepted.
  std::ifstream aside(replaced + ".damaged");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(aside), {}), "another job's result\n");
  EXPECT_TRUE(fs::exists(damaged + ".damaged"));
  EXPECT_EQ(files(), 8);
  EXPECT_EQ(count("damaged"), 2);
  for (const auto& e : journal())
    if (e.value("event", "") == "damaged") {
      EXPECT_NE(e.value("reason", "").find("replaced or damaged"), std::string::npos) << e.dump();
      EXPECT_EQ(e.value("moved_to", ""), e.value("file", "") + ".damaged") << e.dump();
    }
  const std::map<std::string, std::string> hashes = Journal::job_hashes(journal());
  EXPECT_EQ(hashes.at(ids[1]), h5::file_sum_check(replaced).hash) << "the new file's hash stands";
  // A third run finds everything intact and runs nothing.
  launched.clear();
  EXPECT_EQ(run(again, 4, true), 0);
  EXPECT_TRUE(launched.empty());
}

TEST_F(FakeRun, AFileWhoseOwnChecksumFailsIsNotDoneEvenWithoutARecordedHash) {
  auto ok = [](const std::string&, int) { return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001}; };
  EXPECT_EQ(run(ok, 4), 0);
  const std::vector<std::string> ids = job_ids_of(results_);
  ASSERT_EQ(ids.size(), 8u);
  // A results file with a whole-file checksum (as fk-runner writes), damaged after it
  // was summed, in a folder whose journal is gone: only its own checksum tells.
  const std::string file = results_ + "/" + ids[2] + ".h5";
  std::ofstream(file, std::ios::trunc | std::ios::binary) << std::string(h5::kFileSumBlock, '\0') << "payload";
  h5::file_sum_write(file);
  ASSERT_EQ(h5::file_sum_check(file).state, h5::FileSum::kMatches);
  std::fstream(file, std::ios::in | std::ios::out | std::ios::binary).seekp(-2, std::ios::end).put('X');
  fs::remove(results_ + "/.fk-journal.jsonl");
  std::vector<std::string> launched;
  auto again = [&](const std::string& job, int) {
    launched.push_back(job);
    return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001};
  };
  EXPECT_EQ(run(again, 4), 0);
  EXPECT_EQ(launched, std::vector<std::string>{ids[2]});
  EXPECT_TRUE(fs::exists(file + ".damaged"));
  EXPECT_EQ(count("done"), 7) << "the intact files found on disk are recorded with their hashes";
  EXPECT_EQ(Journal::job_hashes(journal()).size(), 8u);
}

TEST_F(FakeRun, ResumeRetriesJobsGivenUpForInfrastructureOnly) {
  // One job hits a full disk (exit 6) on every attempt, one fails by itself (exit 3).
  std::string full_disk, broken;
  auto first = [&](const std::string& job, int) {
    if (full_disk.empty()) full_disk = job;
    if (job != full_disk && broken.empty()) broken = job;
    if (job == full_disk) return FakeOutcome{AttemptEnd::kFailed, 6, 0.001};
    if (job == broken) return FakeOutcome{AttemptEnd::kFailed, 3, 0.001};
    return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001};
  };
  EXPECT_EQ(run(first, 4), 1);
  EXPECT_EQ(files(), 6);
  EXPECT_EQ(count("end", "give_up"), 2);
  EXPECT_EQ(count("end", "retry_quarantined"), 0) << "an I/O error is not the candidates' doing";
  // The disk has room again: --resume runs the job given up for I/O, not the broken one.
  std::vector<std::string> launched;
  auto second = [&](const std::string& job, int) {
    launched.push_back(job);
    return job == broken ? FakeOutcome{AttemptEnd::kFailed, 3, 0.001} : FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001};
  };
  EXPECT_EQ(run(second, 4, true), 1) << "the broken job is still failed";
  EXPECT_EQ(launched, std::vector<std::string>{full_disk});
  EXPECT_EQ(files(), 7);
  EXPECT_EQ(count("retry_given_up"), 1);
}

// Runs fk run on another thread; a run that does not end within `limit_s` ends the test
// binary (fk run hanging is the bug these tests catch).
int run_bounded(const std::function<int()>& body, double limit_s) {
  auto done = std::async(std::launch::async, body);
  if (done.wait_for(std::chrono::duration<double>(limit_s)) != std::future_status::ready) {
    std::fprintf(stderr, "fk run did not end within %.0f s of the signal: it hangs\n", limit_s);
    std::_Exit(1);
  }
  return done.get();
}

TEST_F(FakeRun, SignalEndsTheRunEvenWhenAJobFileLandsWhileStopping) {
  // SIGTERM as the first attempt starts; every attempt's job file lands as it is stopped.
  bool sent = false;
  auto script = [&](const std::string&, int) {
    if (!sent) ::kill(::getpid(), SIGTERM);
    sent = true;
    FakeOutcome o{AttemptEnd::kSucceeded, 0, 60};
    o.file_when_cancelled = true;
    return o;
  };
  EXPECT_EQ(run_bounded([&] { return run(script, 4); }, 20), 128 + SIGTERM);
  EXPECT_EQ(count("interrupted"), 1);
  EXPECT_GE(count("end", "done"), 1) << "the files that landed count as done";
  EXPECT_EQ(count("end", "done"), files());
}

TEST_F(FakeRun, SecondSignalForcesTheExit) {
  // The attempts do not stop when asked; a second SIGTERM must end fk run anyway.
  bool sent = false;
  auto script = [&](const std::string&, int) {
    if (!sent) ::kill(::getpid(), SIGTERM);
    sent = true;
    FakeOutcome o{AttemptEnd::kSucceeded, 0, 60};
    o.ignores_cancel = true;
    return o;
  };
  std::thread second([&] {
    for (int i = 0; i < 200 && count("signal") == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(::getpid(), SIGTERM);
  });
  const int rc = run_bounded([&] { return run(script, 4); }, 20);
  second.join();
  EXPECT_EQ(rc, 128 + SIGTERM);
  EXPECT_EQ(count("signal"), 2);
  EXPECT_EQ(count("interrupted"), 1);
}

}  // namespace
}  // namespace fk::orchestrator
