// compute-sanitizer around the candidate worker: its log read into findings (records
// as compute-sanitizer prints them, the half-written last one held back), the verdict
// they give, and a worker started under a stand-in for the tool (there is no GPU
// here): it serves as without it, its CPU time is its own, and the findings in the
// log reach the supervisor once.
#include "core/error.h"
#include "core/rng.h"
#include "kernels/candidate/sanitizer.h"
#include "kernels/candidate/worker.h"
#include "kernels/fk_kernel.h"
#include "kernels/op.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace fk::kernels {
namespace {

const char* kMemcheckLog =
    "========= COMPUTE-SANITIZER\n"
    "========= Invalid __global__ read of size 16 bytes\n"
    "=========     at void rms_norm_kernel<BF16>(unsigned short *, const unsigned short *)+0x1a0 in rms.cu:41\n"
    "=========     by thread (31,0,0) in block (7,0,0)\n"
    "=========     Address 0x7f3a00001000 is out of bounds\n"
    "=========     and is 2 bytes after the nearest allocation at 0x7f3a00000000 of size 4096 bytes\n"
    "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
    "=========         Host Frame: cuLaunchKernel [0x2cf0a7] in libcuda.so.1\n"
    "=========\n"
    "========= Program hit cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\" on CUDA API call "
    "to cudaStreamSynchronize.\n"
    "=========     Saved host backtrace up to driver entry point at error\n"
    "=========\n"
    "========= ERROR SUMMARY: 2 errors\n";

TEST(SanitizerLog, MemcheckRecordsAreFindingsAndApiErrorsAreNot) {
  const auto f = sanitizer_findings(kMemcheckLog, true);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, SanitizerFindingKind::kMemory);
  EXPECT_NE(f[0].text.find("Invalid __global__ read of size 16 bytes"), std::string::npos) << f[0].text;
  EXPECT_NE(f[0].text.find("rms.cu:41"), std::string::npos) << f[0].text;
  EXPECT_NE(f[0].text.find("block (7,0,0)"), std::string::npos) << f[0].text;
  EXPECT_EQ(f[0].text.find("Host Frame"), std::string::npos) << f[0].text;
  const VerdictReason v = sanitizer_verdict("memcheck", f);
  EXPECT_EQ(v.verdict, Verdict::kIncorrectShape);
  EXPECT_NE(v.reason.find("memcheck reported 1 finding(s)"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("memory error"), std::string::npos) << v.reason;
}

TEST(SanitizerLog, AHalfWrittenRecordWaitsUntilTheLogIsComplete) {
  const std::string log =
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at k()+0x10 in a.cu:3\n";
  EXPECT_TRUE(sanitizer_findings(log, false).empty());
  ASSERT_EQ(sanitizer_findings(log, true).size(), 1u);
  // A line still being written is not read until it ends.
  const std::string partial = std::string(kMemcheckLog).substr(0, std::string(kMemcheckLog).find("Invalid") + 7);
  EXPECT_TRUE(sanitizer_findings(partial, false).empty());
  // The blank prefix line closes a record: it counts before the log is complete.
  EXPECT_EQ(sanitizer_findings(log + "=========\n", false).size(), 1u);
}

TEST(SanitizerLog, RacesUninitialisedReadsAndBarriersAreNumericalAndWorstKindLeads) {
  const std::string log =
      "========= COMPUTE-SANITIZER\n"
      "========= Warning: Race reported between Write access at k()+0x20 and Read access at k()+0x40 [4 hazards]\n"
      "=========\n"
      "========= Error: Race reported between Write access at k()+0x20 in a.cu:9\n"
      "=========     and Read access at k()+0x40 in a.cu:11 [128 hazards]\n"
      "=========\n"
      "========= Uninitialized __global__ memory read of size 4 bytes\n"
      "=========     at k()+0x80 in a.cu:20\n"
      "=========\n"
      "========= Barrier error detected. Divergent thread(s) in warp\n"
      "=========\n"
      "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 1 warning)\n";
  const auto f = sanitizer_findings(log, true);
  ASSERT_EQ(f.size(), 3u);  // the warning is not a finding
  EXPECT_EQ(f[0].kind, SanitizerFindingKind::kRace);
  EXPECT_EQ(f[1].kind, SanitizerFindingKind::kUninitialized);
  EXPECT_EQ(f[2].kind, SanitizerFindingKind::kSync);
  const VerdictReason v = sanitizer_verdict("racecheck", f);
  EXPECT_EQ(v.verdict, Verdict::kIncorrectNumerical);
  EXPECT_NE(v.reason.find("3 finding(s); the first race"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("a.cu:11"), std::string::npos) << v.reason;
}

TEST(SanitizerLog, NothingFoundIsPassedAndForeignTextIsIgnored) {
  EXPECT_TRUE(sanitizer_findings("", true).empty());
  EXPECT_TRUE(sanitizer_findings("hello\nworld =========\n========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 "
                                 "errors\n",
                                 true)
                  .empty());
  EXPECT_EQ(sanitizer_verdict("memcheck", {}).verdict, Verdict::kPassed);
  // Unprintable bytes are replaced, long records cut.
  const auto f = sanitizer_findings("========= Invalid \x01\x7f write " + std::string(2000, 'x') + "\n", true);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].text.find("Invalid ?? write"), std::string::npos);
  EXPECT_LE(f[0].text.size(), 500u);
}

TEST(SanitizerPath, AVariableNamingNoProgramIsSaid) {
  setenv("FK_COMPUTE_SANITIZER", "/nonexistent/compute-sanitizer", 1);
  std::string why;
  EXPECT_EQ(compute_sanitizer_path(&why), "");
  EXPECT_NE(why.find("FK_COMPUTE_SANITIZER=/nonexistent/compute-sanitizer is not an executable"), std::string::npos)
      << why;
  setenv("FK_COMPUTE_SANITIZER", FK_FAKE_SANITIZER, 1);
  EXPECT_EQ(compute_sanitizer_path(&why), FK_FAKE_SANITIZER);
  unsetenv("FK_COMPUTE_SANITIZER");
}

// A baseline worker under the stand-in: it serves a call bit for bit, cpu() reads the
// worker (the stand-in's child, the only process that uses CPU for the call), and the
// planted record arrives once.
TEST(SanitizedWorker, ServesUnderTheToolAndHandsOverItsFindingsOnce) {
  register_builtin_ops();
  for (const std::string tool : {"memcheck", "plant-memory"}) {
    WorkerConfig c;
    c.executable = worker_executable_path();
    c.name = "baseline";
    c.op = "rms_norm";
    c.sanitizer = FK_FAKE_SANITIZER;
    c.sanitizer_tool = tool;
    Worker w(c);
    EXPECT_TRUE(w.sanitized());
    EXPECT_NE(w.sandbox().find("seccomp"), std::string::npos) << w.sandbox();
    const auto loaded = w.load();
    ASSERT_TRUE(loaded) << w.failure();
    ASSERT_EQ(loaded->code, FK_OK) << loaded->message;
    const OpDef& def = OpRegistry::global().def("rms_norm");
    const OpCall host = def.make(OpShape{{{"tokens", 64}, {"hidden", 4096}}, {1e-5}}, DType::kF32, RngStream(3, "s"));
    OpCall remote;
    remote.params = host.params;
    for (const Tensor& t : host.args) {
      Tensor r = w.alloc(t.dtype(), t.shape());
      std::memcpy(r.data(), t.data(), t.nbytes());
      remote.args.push_back(r);
    }
    const WorkerCpu before = w.cpu();
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(w.call("rms_norm", remote)) << w.failure();
    // 200 calls over 262144 elements take tens of ms of the worker's CPU; the stand-in,
    // waiting for its child, takes none: cpu() must read the worker.
    EXPECT_GT(WorkerCpu::used(before, w.cpu()), 0.005) << "cpu() reads the process that ran the calls";
    OpRegistry::global().impl("rms_norm", "cpu").run(host);
    EXPECT_EQ(std::memcmp(host.args[0].data(), remote.args[0].data(), host.args[0].nbytes()), 0) << tool;
    const auto first = w.sanitizer_findings();
    if (tool == "memcheck") {
      EXPECT_TRUE(first.empty());
    } else {
      ASSERT_EQ(first.size(), 1u);
      EXPECT_EQ(first[0].kind, SanitizerFindingKind::kMemory);
      EXPECT_NE(first[0].text.find("fake.cu:12"), std::string::npos) << first[0].text;
    }
    EXPECT_TRUE(w.sanitizer_findings().empty()) << "a finding is handed over once";
    w.kill();
    EXPECT_FALSE(w.alive());
    EXPECT_TRUE(w.sanitizer_findings().empty());
  }
}

}  // namespace
}  // namespace fk::kernels
