#include "reports_test_util.h"

#include <fmt/format.h>
#include <unistd.h>

namespace fk::results::testing {

void ReportsTest::SetUp() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  dir_ = std::filesystem::temp_directory_path() /
         fmt::format("fk_reports_{}_{}_{}", info->test_suite_name(), info->name(), ::getpid());
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

void ReportsTest::TearDown() {
  if (!HasFailure()) std::filesystem::remove_all(dir_);
}

std::string ReportsTest::write_job(const std::string& folder, const SyntheticJobSpec& spec) {
  std::filesystem::create_directories(path(folder));
  const std::string p = path(folder + "/" + spec.id + ".h5");
  job_result_write(p, synthetic_job(spec));
  return p;
}

std::string job_id(int n) { return fmt::format("{:012x}", 0xa00000000000ULL + static_cast<unsigned>(n)); }

std::string expect_error(ErrorKind kind, const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected fk::Error of kind " << error_kind_name(kind);
  return "";
}

}  // namespace fk::results::testing
