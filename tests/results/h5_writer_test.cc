// Writer: atomic creation. The target appears only at commit(); an exception (or a
// crash) before commit leaves the target as it was; commit replaces an existing file.
#include "h5_test_util.h"
#include "results/h5/h5.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <optional>

namespace fk::h5 {
namespace {

using testing::expect_error;
namespace fs = std::filesystem;

class WriterTest : public testing::H5Test {
 protected:
  // A committed file at `target` whose root attribute "version" is `version`.
  void write_version(const std::string& target, int64_t version) {
    Writer w(target);
    w.set_attr("version", version);
    w.commit();
  }
  int64_t read_version(const std::string& target) { return File::open_read(target).attr<int64_t>("version"); }
};

TEST_F(WriterTest, TargetAppearsOnlyAtCommit) {
  const std::string target = path("job.h5");
  Writer w(target);
  EXPECT_EQ(w.target_path(), target);
  EXPECT_TRUE(w.temp_path().starts_with(target + ".tmp." + std::to_string(::getpid()) + ".")) << w.temp_path();
  w.write_array("values", std::vector<double>{1.0, 2.0, 3.0});
  w.set_attr("version", 7);
  EXPECT_FALSE(fs::exists(target));
  EXPECT_TRUE(fs::exists(w.temp_path()));
  const std::string temp = w.temp_path();

  w.commit();
  EXPECT_TRUE(w.committed());
  EXPECT_TRUE(w.temp_path().empty());
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"job.h5"});
  EXPECT_EQ(read_version(target), 7);
  EXPECT_EQ(File::open_read(target).read_array<double>("values"), (std::vector<double>{1, 2, 3}));
}

TEST_F(WriterTest, ExceptionBeforeCommitLeavesTargetAndRemovesTemp) {
  const std::string target = path("job.h5");
  write_version(target, 1);
  std::string temp;
  std::optional<Group> outlives_writer;
  try {
    Writer w(target);
    temp = w.temp_path();
    w.set_attr("version", 2);
    outlives_writer = w.require_group("kernel_stage");  // still open after the Writer is gone
    outlives_writer->write_array("x", std::vector<int64_t>{1, 2});
    throw std::runtime_error("a runner failure");
  } catch (const std::runtime_error&) {
  }
  ASSERT_FALSE(temp.empty());
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"job.h5"});
  EXPECT_EQ(read_version(target), 1);
  // The Writer closed its file with everything in it: the group is stale, not leaked.
  expect_error(ErrorKind::kIo, [&] { outlives_writer->set_attr("late", 1); });
}

TEST_F(WriterTest, NoTargetIsCreatedWithoutCommit) {
  const std::string target = path("never.h5");
  {
    Writer w(target);
    w.set_attr("x", 1);
  }
  EXPECT_FALSE(fs::exists(target));
  EXPECT_TRUE(dir_entries().empty());
}

TEST_F(WriterTest, CommitReplacesAnExistingFile) {
  const std::string target = path("job.h5");
  write_version(target, 1);
  write_version(target, 2);
  EXPECT_EQ(read_version(target), 2);
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"job.h5"});
}

TEST_F(WriterTest, CommitClosesObjectsStillOpenAndLeavesThemStale) {
  const std::string target = path("job.h5");
  Writer w(target);
  Group g = w.require_group("a/b");
  Dataset d = g.write_array("v", std::vector<int32_t>{4, 5});
  w.commit();
  EXPECT_EQ(File::open_read(target).read_array<int32_t>("a/b/v"), (std::vector<int32_t>{4, 5}));
  const std::string what = expect_error(ErrorKind::kIo, [&] { g.set_attr("late", 1); });
  EXPECT_NE(what.find(target), std::string::npos) << what;
  expect_error(ErrorKind::kIo, [&] { (void)d.shape(); });
}

TEST_F(WriterTest, CrashBeforeCommitLeavesTargetUntouched) {
  const std::string target = path("job.h5");
  write_version(target, 1);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      Writer w(target);
      w.set_attr("version", 2);
      w.write_array("big", std::vector<double>(100000, 1.0));
      ::_exit(0);  // a crash: no destructor, no commit
    } catch (...) {
      ::_exit(1);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed to write";
  EXPECT_EQ(read_version(target), 1);
  // The leftover carries the temporary name, never the target's.
  for (const std::string& name : dir_entries()) {
    EXPECT_TRUE(name == "job.h5" || name.starts_with("job.h5.tmp.")) << name;
  }
}

TEST_F(WriterTest, CreatingInAMissingFolderNamesTheTarget) {
  const std::string target = path("no/such/folder/job.h5");
  const std::string what = expect_error(ErrorKind::kIo, [&] { Writer w(target); });
  EXPECT_NE(what.find(target), std::string::npos) << what;
  EXPECT_NE(what.find("HDF5:"), std::string::npos) << what;
}

TEST_F(WriterTest, FailedRenameRemovesTempAndReportsTarget) {
  const std::string target = path("occupied");
  fs::create_directories(fs::path(target) / "inside");  // a non-empty folder cannot be replaced
  Writer w(target);
  const std::string temp = w.temp_path();
  const std::string what = expect_error(ErrorKind::kIo, [&] { w.commit(); });
  EXPECT_NE(what.find(target), std::string::npos) << what;
  EXPECT_NE(what.find("rename"), std::string::npos) << what;
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_FALSE(w.committed());
}

// A full disk (here RLIMIT_FSIZE, with SIGXFSZ ignored so writes fail with EFBIG):
// every write either lands or throws kIo; a failed close never crashes, neither at the
// failure nor when the process exits (HDF5 would release the dead file id again then).
TEST_F(WriterTest, FullDiskThrowsIoAndNeverCrashes) {
  const std::string dir = path("");
  std::fflush(nullptr);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64 << 10, 64 << 10};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(10);
    int close_failures = 0;
    for (size_t n = 1000; n <= 64000; n += 500) {
      try {
        Writer w(fmt::format("{}/job{}.h5", dir, n));
        w.set_attr("n", static_cast<int64_t>(n));
        w.write_array("data", std::vector<double>(n, 1.5));
        w.commit();
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::kIo) ::_exit(11);
        close_failures += std::string(e.what()).find("cannot close file") != std::string::npos;
      }
    }
    std::exit(close_failures > 0 ? 0 : 12);  // a normal exit: atexit handlers run
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "the writer crashed: " << strsignal(WTERMSIG(status));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 12) << "no commit hit the limit: the test proves nothing";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "11: an error that is not kIo";
  for (const std::string& name : dir_entries()) {
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << "a temporary file left behind: " << name;
  }
}

TEST_F(WriterTest, SecondCommitIsRejected) {
  Writer w(path("job.h5"));
  w.commit();
  expect_error(ErrorKind::kInvalidArgument, [&] { w.commit(); });
}

TEST_F(WriterTest, MovedWriterCommitsAndMovedFromOwnsNothing) {
  const std::string target = path("job.h5");
  Writer first(target);
  first.set_attr("version", 3);
  Writer second(std::move(first));
  EXPECT_TRUE(first.temp_path().empty());  // NOLINT(bugprone-use-after-move): documented state
  second.commit();
  EXPECT_EQ(read_version(target), 3);
  EXPECT_EQ(dir_entries(), std::vector<std::string>{"job.h5"});
}

}  // namespace
}  // namespace fk::h5
