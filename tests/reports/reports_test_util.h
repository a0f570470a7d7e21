// Shared fixture of the campaign-tool tests: a fresh folder per test and helpers that
// write synthetic job files (results/campaign/synthetic_job.h) into it.
#pragma once

#include "core/error.h"
#include "results/campaign/synthetic_job.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

namespace fk::results::testing {

class ReportsTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // A path inside this test's folder.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Writes the job of `spec` as <folder>/<spec.id>.h5 (folder created) and returns its path.
  std::string write_job(const std::string& folder, const SyntheticJobSpec& spec);

  std::filesystem::path dir_;
};

// A 12-hex-digit job id made from `n`.
std::string job_id(int n);

// Runs `body`, expects fk::Error of `kind`, returns what().
std::string expect_error(ErrorKind kind, const std::function<void()>& body);

}  // namespace fk::results::testing
