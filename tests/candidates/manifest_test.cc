// kernel.yaml validation and the build cache.
#include "kernels/candidate/compile.h"
#include "kernels/candidate/manifest.h"

#include <gtest/gtest.h>

#include <thread>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

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

// Builds of one candidate into one cache at the same time (two fk checks, or two test
// processes, sharing FK_CACHE_DIR) each have their own compiler scratch folder: on the
// H200 one build removed the other's and the second was a COMPILE_ERROR "can't create
// .../tmp/...o".
TEST_F(ManifestTest, ConcurrentBuildsOfOneCandidateBothSucceed) {
  ASSERT_TRUE(load(kGood).ok());
  CompileOptions o = CompileOptions::defaults();
  o.cache_dir = (dir_ / "cache").string();
  for (int round = 0; round < 3; ++round) {
    fs::remove_all(o.cache_dir);
    std::vector<CompileResult> results(4);
    std::vector<std::thread> builders;
    for (auto& r : results) builders.emplace_back([&, p = &r] { *p = candidate_compile(*manifest_, o); });
    for (auto& t : builders) t.join();
    for (const auto& r : results) EXPECT_TRUE(r.ok) << r.reason << "\n" << r.log;
    EXPECT_TRUE(fs::exists(results[0].library));
  }
}

}  // namespace
}  // namespace fk::kernels

namespace fk::kernels {
namespace {

// A poor man's fuzzer in the regular build (the libFuzzer build has no op registry):
// every shipped kernel.yaml, mutated many ways, loads into a manifest or diagnostics;
// the loader never throws, crashes or hangs. Sources named must be regular files inside
// the folder: a symbolic link to one is refused.
TEST_F(ManifestTest, MutatedManifestsGiveAManifestOrDiagnostics) {
  std::vector<std::string> seeds = {kGood};
  for (const auto& e : fs::recursive_directory_iterator(fs::path(FK_SOURCE_DIR) / "candidates"))
    if (e.path().filename() == "kernel.yaml") {
      std::ifstream f(e.path());
      seeds.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
  std::mt19937 rng(20261201);
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz_0123456789 :-[],{}\"'#\n\t.&*!|>%@`\\/\x01\xff";
  int loaded = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = rng() % 2 ? seeds[0] : seeds[rng() % seeds.size()];  // half: one whose source exists
    for (int k = 1 + static_cast<int>(rng() % 4); k > 0 && !s.empty(); --k) {
      const size_t at = rng() % s.size();
      switch (rng() % 5) {
        case 0: s[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(at, 1 + rng() % 8); break;
        case 2: s.insert(at, std::string(1 + rng() % 4, alphabet[rng() % alphabet.size()])); break;
        case 3: s.insert(at, s.substr(rng() % s.size(), 1 + rng() % 40)); break;
        default: s.insert(at, "sources: [/etc/passwd, ../k.cc, k.cc]\n"); break;
      }
    }
    try {
      const auto d = load(s);
      if (manifest_) {
        ++loaded;
        for (const auto& src : manifest_->sources) {
          const fs::path p = (dir_ / src).lexically_normal();
          EXPECT_EQ(p.string().rfind(dir_.string() + "/", 0), 0u) << "a source outside the folder: " << src;
        }
      } else {
        ++refused;
        EXPECT_FALSE(d.ok()) << "refused without a reason:\n" << s;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the loader threw " << e.what() << " on:\n" << s;
    }
  }
  EXPECT_GT(refused, 100);
  EXPECT_GT(loaded, 10);
  fs::create_symlink(dir_ / "k.cc", dir_ / "link.cc");
  const auto d = load("op: silu_and_mul\nbackend: cpu\nsources: [link.cc]\nentry: my_entry\ndtypes: [fp32]\n");
  EXPECT_TRUE(has(d, "sources[0]", "symbolic link")) << d.to_string();
}

}  // namespace
}  // namespace fk::kernels
