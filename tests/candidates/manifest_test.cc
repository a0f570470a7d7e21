// kernel.yaml validation and the build cache.
#include "kernels/candidate/compile.h"
#include "kernels/candidate/manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fk::kernels {
namespace {
namespace fs = std::filesystem;

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fk-manifest-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "k.cc") << "#include \"fk_kernel.h\"\nFK_KERNEL_DEFINE_ABI_VERSION()\n"
                                    "extern \"C\" int my_entry(const fk_context*, fk_t, fk_t) { return FK_OK; }\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  spec::Diagnostics load(const std::string& yaml) {
    std::ofstream(dir_ / "kernel.yaml") << yaml;
    spec::Diagnostics d;
    manifest_ = candidate_manifest_load(dir_.string(), d);
    return d;
  }
  static bool has(const spec::Diagnostics& d, const std::string& field, const std::string& msg) {
    for (const auto& i : d.items())
      if (i.field == field && i.message.find(msg) != std::string::npos) return true;
    return false;
  }
  fs::path dir_;
  std::optional<CandidateManifest> manifest_;
};

const char* kGood = "op: silu_and_mul\nbackend: cpu\nsources: [k.cc]\nentry: my_entry\ndtypes: [bf16, fp32]\n";

TEST_F(ManifestTest, ValidManifest) {
  const auto d = load(kGood);
  ASSERT_TRUE(d.ok()) << d.to_string();
  EXPECT_EQ(manifest_->op, "silu_and_mul");
  EXPECT_TRUE(manifest_->handles(DType::kBF16));
  EXPECT_FALSE(manifest_->handles(DType::kF16));
  EXPECT_EQ(manifest_->name, dir_.filename().string());
}

TEST_F(ManifestTest, EveryRule) {
  const std::string g = kGood;
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = g;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_TRUE(has(load(with("op: silu_and_mul", "op: silu_and_mull")), "op", "did you mean 'silu_and_mul'"));
  EXPECT_TRUE(has(load(with("backend: cpu", "backend: tpu")), "backend", "not one of [cpu, cuda]"));
  EXPECT_TRUE(has(load(with("[k.cc]", "[missing.cc]")), "sources[0]", "does not exist"));
  EXPECT_TRUE(has(load(with("[k.cc]", "[../k.cc]")), "sources[0]", "outside the candidate folder"));
  EXPECT_TRUE(has(load(with("entry: my_entry", "entry: 1bad")), "entry", "not a C identifier"));
  EXPECT_TRUE(has(load(with("[bf16, fp32]", "[fp8]")), "dtypes", "not one of [fp32, fp16, bf16]"));
  EXPECT_TRUE(has(load(g + "flags: [-O0]\n"), "flags", "not an allowed cpu flag"));
  EXPECT_TRUE(has(load(g + "flgs: []\n"), "flgs", "did you mean 'flags'"));
  EXPECT_TRUE(load(g + "flags: [-DTILE=64, -funroll-loops]\n").ok());
  EXPECT_TRUE(has(load("op: rms_norm\n"), "entry", "required field is missing"));
}

TEST_F(ManifestTest, BuildIsCachedByContentAndErrorsKeepTheCompilerMessage) {
  ASSERT_TRUE(load(kGood).ok());
  CompileOptions o = CompileOptions::defaults();
  o.cache_dir = (dir_ / "cache").string();
  const CompileResult first = candidate_compile(*manifest_, o);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cached);
  const CompileResult second = candidate_compile(*manifest_, o);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.library, first.library);
  std::ofstream(dir_ / "k.cc", std::ios::app) << "\nint broken( { \n";  // a source change rebuilds
  const CompileResult third = candidate_compile(*manifest_, o);
  EXPECT_FALSE(third.ok);
  EXPECT_NE(third.key, first.key);
  EXPECT_NE(third.log.find("error"), std::string::npos);
  EXPECT_NE(third.reason.find("k.cc"), std::string::npos) << third.reason;
}

}  // namespace
}  // namespace fk::kernels
