// Every candidate in candidates/ goes through `fk check` at its default scales (the
// real command, as a subprocess) on a 32-layer Llama-shaped model (or the architecture
// its manifest names, `expect_arch`), and must get the verdict its manifest expects
// with a reason containing the expected words: PASSED in every job for the correct
// examples, and for the zoo of deliberately bad kernels the verdict in kernel.yaml
// (`expect`, `expect_reason`) in some job and no other failure in any (a kernel wrong
// only at published widths passes at the tiny preset). A candidate's end-to-end
// speedup must be the one summary/jobs reports.
//
// Built twice. fk_candidate_zoo_tests (label candidates) checks every candidate with
// `--backend cpu`: CUDA candidates must build (nvcc, production flags) and are then
// UNSUPPORTED, naming the backend they need. fk_candidate_zoo_cuda_tests (label gpu,
// FK_ZOO_BACKEND_CUDA) checks the CUDA candidates with `--backend cuda` on the GPU
// machine, where they must get their manifests' verdicts like the CPU ones.
#include "core/subprocess.h"
#include "kernels/candidate/manifest.h"
#include "results/campaign/job_digest.h"
#include "results/h5/h5.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fk {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> candidate_folders() {
  std::vector<std::string> out;
  const fs::path root = fs::path(FK_SOURCE_DIR) / "candidates";
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename() != "kernel.yaml") continue;
#if FK_ZOO_BACKEND_CUDA
    spec::Diagnostics d;
    const auto m = kernels::candidate_manifest_load(e.path().parent_path().string(), d);
    if (!m || m->backend != DeviceKind::kCuda) continue;
#endif
    out.push_back(e.path().parent_path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name(const std::string& folder) {
  std::string rel = fs::relative(folder, fs::path(FK_SOURCE_DIR) / "candidates").string();
  for (char& c : rel)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return rel;
}

std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line.size() >= 8 ? line : "";
}

class Candidates : public ::testing::TestWithParam<std::string> {};

TEST_P(Candidates, GetTheExpectedVerdict) {
  const std::string folder = GetParam();
  spec::Diagnostics d;
  const auto m = kernels::candidate_manifest_load(folder, d);
  ASSERT_TRUE(m.has_value()) << d.to_string();
#if FK_ZOO_BACKEND_CUDA
  const std::string backend = "cuda";
#else
  const std::string backend = "cpu";
#endif
  // A candidate for another device than the jobs' is built, then UNSUPPORTED.
  const bool elsewhere = std::string(device_kind_name(m->backend)) != backend;
  const std::string expect = elsewhere ? "UNSUPPORTED" : (m->expect.empty() ? "PASSED" : m->expect);
  const std::string reason = elsewhere ? "runs only in a job on the cuda backend" : m->expect_reason;
  const std::string out = fmt::format("{}/candidate-tests/{}", FK_BINARY_DIR, test_name(folder));
  fs::remove_all(out);
  SubprocessOptions so;
  so.timeout_s = 600;
  so.extra_env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                  "FK_CACHE_DIR=" + std::string(FK_BINARY_DIR) + "/candidate-cache"};
  const std::string workload = m->expect_workload.empty() ? "prefill-512" : m->expect_workload;
  const fs::path escaped_here = fs::path(folder) / "escaped.txt", escaped_tmp = "/tmp/fk-zoo-escaped.txt";
  fs::remove(escaped_here);
  fs::remove(escaped_tmp);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string arch = m->expect_arch.empty()
                               ? std::string(FK_SOURCE_DIR) + "/tests/candidates/llama-32-layers.yaml"
                               : m->expect_arch;
  const auto run = subprocess_run({FK_EXE, "check", folder, "--arch", arch, "--workload", workload, "--results", out,
                                   "-q", "--rounds", "2", "--iterations", "3", "--time-limit", "5", "--backend",
                                   backend},
                                  so);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(run.started) << run.error;
  ASSERT_FALSE(run.timed_out) << run.output;
  // A hung candidate costs its time limit a few times, not the test's limit.
  EXPECT_LT(took, 240) << run.output;
  // Nothing escapes the sandbox: no file written outside, no line of a file outside read.
  EXPECT_FALSE(fs::exists(escaped_here)) << "the candidate wrote into its own folder";
  EXPECT_FALSE(fs::exists(escaped_tmp)) << "the candidate wrote into /tmp";
  if (const std::string secret = first_line("/etc/shadow"); !secret.empty()) {
    EXPECT_EQ(run.output.find(secret), std::string::npos) << "a line of /etc/shadow reached fk check's output";
  }
  EXPECT_EQ(run.exit_code, expect == "PASSED" ? 0 : 1) << run.output;
  // The verdict and its reason, as written into the job's HDF5 file.
  std::vector<std::string> verdicts, reasons, sandboxes;
  std::vector<double> speedups;
  for (const auto& e : fs::directory_iterator(out + "/results")) {
    if (e.path().extension() != ".h5") continue;
    h5::File f = h5::File::open_read(e.path().string());
    const h5::Table s = f.read_table("candidates/summary");
    ASSERT_EQ(s.rows(), 1u);
    verdicts.push_back(s.column<std::string>("verdict")[0]);
    reasons.push_back(s.column<std::string>("reason")[0]);
    sandboxes.push_back(s.column<std::string>("sandbox")[0]);
    speedups.push_back(s.column<double>("kernel_speedup_geomean")[0]);
    // The runner's end-to-end speedup is summary/jobs' (the digest's) figure of the same file.
    const double e2e = s.column<double>("e2e_speedup")[0];
    if (std::isfinite(e2e)) {
      EXPECT_EQ(e2e, results::job_digest_read(f).e2e_speedup) << e.path();
    }
    EXPECT_EQ(s.column<bool>("compiled")[0], expect != "COMPILE_ERROR") << "builds with the production flags";
    if (!elsewhere && expect != "COMPILE_ERROR" && expect != "RUNTIME_ERROR") {
      EXPECT_TRUE(s.column<bool>("exercised")[0]);
    }
  }
  ASSERT_FALSE(verdicts.empty()) << run.output;
  size_t expected_at = verdicts.size();
  for (size_t i = 0; i < verdicts.size(); ++i) {
    // Every job gets the expected verdict or PASSED, and PASSED carries no reason.
    EXPECT_TRUE(verdicts[i] == expect || verdicts[i] == "PASSED") << verdicts[i] << ": " << reasons[i] << "\n"
                                                                   << run.output;
    if (verdicts[i] == "PASSED") {
      EXPECT_EQ(reasons[i], "");
    }
    if (verdicts[i] == expect && (reason.empty() || reasons[i].find(reason) != std::string::npos)) expected_at = i;
    if (m->expect_speedup_below > 0 && std::isfinite(speedups[i])) {
      EXPECT_LT(speedups[i], m->expect_speedup_below) << "a figure the candidate's process could change";
    }
    if (!elsewhere && expect != "COMPILE_ERROR" && expect != "UNSUPPORTED") {
      EXPECT_NE(sandboxes[i].find("seccomp"), std::string::npos) << sandboxes[i];
    }
  }
  EXPECT_LT(expected_at, verdicts.size()) << "no job gave " << expect << " with a reason containing '" << reason
                                          << "'; reasons: " << fmt::format("{}", fmt::join(reasons, " | "))
                                          << "\n" << run.output;
}

#if FK_ZOO_BACKEND_CUDA
// A kernel that never ends costs its worker and that worker's context, not the GPU: in
// one fk check, the endless kernel is TIMEOUT and a correct candidate judged right
// after it on the same device is PASSED.
TEST(CudaCandidates, ACorrectKernelPassesRightAfterAHungOne) {
  const std::string root = std::string(FK_SOURCE_DIR) + "/candidates/";
  const std::string out = std::string(FK_BINARY_DIR) + "/candidate-tests/hung-then-correct";
  fs::remove_all(out);
  SubprocessOptions so;
  so.timeout_s = 600;
  so.extra_env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                  "FK_CACHE_DIR=" + std::string(FK_BINARY_DIR) + "/candidate-cache"};
  const auto run = subprocess_run({FK_EXE, "check", root + "zoo/endless_loop_cuda", root + "rms_norm/cuda", "--arch",
                                   std::string(FK_SOURCE_DIR) + "/tests/candidates/llama-32-layers.yaml",
                                   "--workload", "prefill-512", "--scale", "tiny", "--results", out, "-q", "--rounds",
                                   "2", "--iterations", "3", "--time-limit", "5", "--backend", "cuda"},
                                  so);
  ASSERT_TRUE(run.started) << run.error;
  ASSERT_FALSE(run.timed_out) << run.output;
  std::map<std::string, std::vector<std::string>> verdicts;  // candidate -> verdicts of its jobs
  for (const auto& e : fs::directory_iterator(out + "/results")) {
    if (e.path().extension() != ".h5") continue;
    h5::File f = h5::File::open_read(e.path().string());
    const h5::Table s = f.read_table("candidates/summary");
    for (size_t r = 0; r < s.rows(); ++r)
      verdicts[s.column<std::string>("candidate")[r]].push_back(s.column<std::string>("verdict")[r]);
  }
  ASSERT_EQ(verdicts.size(), 2u) << run.output;
  for (const auto& [name, v] : verdicts) {
    ASSERT_FALSE(v.empty());
    const std::string want = name.find("endless") != std::string::npos ? "TIMEOUT" : "PASSED";
    for (const auto& got : v) EXPECT_EQ(got, want) << name << "\n" << run.output;
  }
}
#endif

#if FK_ZOO_BACKEND_CUDA
// The CUDA candidates whose manifests say what compute-sanitizer finds
// (`expect_sanitized`), through `fk check --sanitize` at the tiny preset: the verdict in
// some job and no other failure, PASSED with no reason for clean kernels.
std::vector<std::string> sanitized_folders() {
  std::vector<std::string> out;
  for (const auto& folder : candidate_folders()) {
    spec::Diagnostics d;
    const auto m = kernels::candidate_manifest_load(folder, d);
    if (m && !m->expect_sanitized.empty()) out.push_back(folder);
  }
  return out;
}

class SanitizedCandidates : public ::testing::TestWithParam<std::string> {};

TEST_P(SanitizedCandidates, GetTheExpectedVerdictUnderComputeSanitizer) {
  const std::string folder = GetParam();
  spec::Diagnostics d;
  const auto m = kernels::candidate_manifest_load(folder, d);
  ASSERT_TRUE(m.has_value()) << d.to_string();
  const std::string out = fmt::format("{}/candidate-tests/sanitized-{}", FK_BINARY_DIR, test_name(folder));
  fs::remove_all(out);
  SubprocessOptions so;
  so.timeout_s = 900;
  so.extra_env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                  "FK_CACHE_DIR=" + std::string(FK_BINARY_DIR) + "/candidate-cache"};
  const auto run = subprocess_run({FK_EXE, "check", folder, "--arch",
                                   std::string(FK_SOURCE_DIR) + "/tests/candidates/llama-32-layers.yaml", "--workload",
                                   "prefill-512", "--scale", "tiny", "--results", out, "-q", "--rounds", "2",
                                   "--time-limit", "30", "--backend", "cuda", "--sanitize"},
                                  so);
  ASSERT_TRUE(run.started) << run.error;
  ASSERT_FALSE(run.timed_out) << run.output;
  const std::string& expect = m->expect_sanitized;
  EXPECT_EQ(run.exit_code, expect == "PASSED" ? 0 : 1) << run.output;
  std::vector<std::string> verdicts, reasons;
  for (const auto& e : fs::directory_iterator(out + "/results")) {
    if (e.path().extension() != ".h5") continue;
    h5::File f = h5::File::open_read(e.path().string());
    const h5::Table s = f.read_table("candidates/summary");
    ASSERT_EQ(s.rows(), 1u);
    verdicts.push_back(s.column<std::string>("verdict")[0]);
    reasons.push_back(s.column<std::string>("reason")[0]);
  }
  ASSERT_FALSE(verdicts.empty()) << run.output;
  bool found = false;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    EXPECT_TRUE(verdicts[i] == expect || verdicts[i] == "PASSED") << verdicts[i] << ": " << reasons[i] << "\n"
                                                                   << run.output;
    if (verdicts[i] == expect && reasons[i].find(m->expect_sanitized_reason) != std::string::npos) found = true;
  }
  EXPECT_TRUE(found) << "no job gave " << expect << " with '" << m->expect_sanitized_reason
                     << "'; reasons: " << fmt::format("{}", fmt::join(reasons, " | ")) << "\n" << run.output;
}

INSTANTIATE_TEST_SUITE_P(All, SanitizedCandidates, ::testing::ValuesIn(sanitized_folders()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return test_name(param_info.param); });
#endif

INSTANTIATE_TEST_SUITE_P(All, Candidates, ::testing::ValuesIn(candidate_folders()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) { return test_name(param_info.param); });

}  // namespace
}  // namespace fk
