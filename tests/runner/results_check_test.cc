// Checks fk-runner's job files (the folder in FK_RESULTS_DIR) after the layouts run:
// every job completed and holds its tables; the fp32 logits of every layout agree
// with tp1pp1dp1 within reduction-order tolerance; baseline precision traces are
// sane. With FK_COMPARE_A / FK_COMPARE_B: two runs of the same jobs are bitwise equal.
#include "results/h5/h5.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

namespace fk {
namespace {
namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::vector<std::string> job_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".h5") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<float> logits(const h5::File& f) {
  return f.read_array<float>("model_stage/fp32_logits");
}

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    den += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

TEST(LayoutResults, EveryLayoutAgreesWithTp1) {
  const std::string dir = env("FK_RESULTS_DIR");
  if (dir.empty()) GTEST_FAIL() << "set FK_RESULTS_DIR to the results folder of the layouts run";
  const auto files = job_files(dir);
  ASSERT_EQ(files.size(), 60u) << "6 architectures x 10 layouts";
  std::map<std::string, std::vector<float>> reference;  // arch -> tp1 logits
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> others;
  std::set<std::string> layouts;
  for (const auto& path : files) {
    h5::File f = h5::File::open_read(path);
    SCOPED_TRACE(path);
    EXPECT_EQ(f.attr<std::string>("status"), "completed");
    EXPECT_EQ(f.attr<std::string>("format"), "fastkernels-job");
    const std::string arch = f.attr<std::string>("architecture"), layout = f.attr<std::string>("layout");
    layouts.insert(layout);
    // Kernel stage: every instance passed against the fp64 reference.
    h5::Table inst = f.read_table("kernel_stage/instances");
    ASSERT_GT(inst.rows(), 5u);
    for (bool ok : inst.column<bool>("passed")) EXPECT_TRUE(ok);
    for (int64_t n : inst.column<int64_t>("iterations")) EXPECT_EQ(n, 3);
    // Raw timings are kept per rank: one row per rank that ran the instance.
    h5::Dataset t0 = f.open_dataset("kernel_stage/timings/0000");
    EXPECT_EQ(t0.shape()[1], 3);
    // Model stage: bf16 drift is never zero and stays small (MoE larger: a token whose
    // top-k changes under bf16 goes to another expert).
    h5::Table layers = f.read_table("model_stage/layers");
    ASSERT_GT(layers.rows(), 0u);
    const double bound = arch == "mixtral-8x7b" || arch == "jamba-v0.1" ? 0.25 : 0.05;
    for (double e : layers.column<double>("rel_err_vs_fp32")) {
      EXPECT_GT(e, 1e-5);
      EXPECT_LT(e, bound);
    }
    h5::Table lg = f.read_table("model_stage/logits");
    for (double top1 : lg.column<double>("top1_vs_fp32")) EXPECT_GE(top1, 0.5);
    for (double kl : lg.column<double>("kl_vs_fp32")) EXPECT_LT(kl, 0.01);
    h5::Table steps = f.read_table("model_stage/steps");
    EXPECT_EQ(steps.rows(), static_cast<size_t>(f.attr<int64_t>("ranks") * 2 * 3));  // ranks x runs x steps
    if (layout == "tp1pp1dp1") reference[arch] = logits(f);
    else others[arch].push_back({layout, path});
  }
  EXPECT_EQ(layouts.size(), 10u);
  for (const auto& [arch, list] : others) {
    ASSERT_TRUE(reference.count(arch)) << arch;
    for (const auto& [layout, path] : list) {
      const auto l = logits(h5::File::open_read(path));
      ASSERT_EQ(l.size(), reference[arch].size()) << arch << " " << layout;
      const double e = rel_l2(l, reference[arch]);
      EXPECT_LT(e, 1e-5) << arch << " " << layout << " fp32 logits differ from tp1 by " << e;
    }
  }
}

// The job files of a results folder by architecture (one job each).
std::map<std::string, std::string> by_architecture(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& path : job_files(dir)) {
    h5::File f = h5::File::open_read(path);
    EXPECT_TRUE(out.emplace(f.attr<std::string>("architecture"), path).second) << path;
  }
  return out;
}

std::string model_stage_attr(const h5::File& f, const char* name) {
  return f.open_group("model_stage").attr<std::string>(name);
}

// The same jobs with model_stage.reference: streamed (FK_COMPARE_STREAMED) against the
// resident run (FK_COMPARE_A): each job says how it held its reference, and the fp32
// logits and every traced layer error are the same bits.
TEST(LayoutResults, StreamedReferenceIsBitwiseTheResidentRun) {
  const std::string a = env("FK_COMPARE_A"), s = env("FK_COMPARE_STREAMED");
  if (a.empty() || s.empty()) GTEST_FAIL() << "set FK_COMPARE_A and FK_COMPARE_STREAMED to two results folders";
  const auto fa = by_architecture(a), fs_ = by_architecture(s);
  ASSERT_EQ(fa.size(), fs_.size());
  ASSERT_FALSE(fa.empty());
  for (const auto& [arch, path] : fa) {
    ASSERT_TRUE(fs_.count(arch)) << arch;
    h5::File x = h5::File::open_read(path), y = h5::File::open_read(fs_.at(arch));
    EXPECT_EQ(y.attr<std::string>("status"), "completed") << arch << ": " << y.attr<std::string>("error");
    EXPECT_EQ(model_stage_attr(x, "reference_weights"), "resident") << arch;
    EXPECT_EQ(model_stage_attr(y, "reference_weights"), "streamed") << arch;
    EXPECT_EQ(logits(x), logits(y)) << arch;
    const h5::Table lx = x.read_table("model_stage/layers"), ly = y.read_table("model_stage/layers");
    EXPECT_EQ(lx.column<double>("rel_err_vs_fp32"), ly.column<double>("rel_err_vs_fp32")) << arch;
    const h5::Table gx = x.read_table("model_stage/logits"), gy = y.read_table("model_stage/logits");
    EXPECT_EQ(gx.column<double>("kl_vs_fp32"), gy.column<double>("kl_vs_fp32")) << arch;
    // The streamed job's estimate is the streamed one: smaller than the resident one.
    EXPECT_LT(y.open_group("model_stage").attr<int64_t>("memory_estimate_bytes"),
              x.open_group("model_stage").attr<int64_t>("memory_estimate_bytes"))
        << arch;
  }
}

TEST(LayoutResults, SameSeedIsBitwiseIdentical) {
  const std::string a = env("FK_COMPARE_A"), b = env("FK_COMPARE_B");
  if (a.empty() || b.empty()) GTEST_FAIL() << "set FK_COMPARE_A and FK_COMPARE_B to two results folders";
  const auto fa = job_files(a), fb = job_files(b);
  ASSERT_EQ(fa.size(), fb.size());
  ASSERT_FALSE(fa.empty());
  for (size_t i = 0; i < fa.size(); ++i) {
    h5::File x = h5::File::open_read(fa[i]), y = h5::File::open_read(fb[i]);
    EXPECT_EQ(logits(x), logits(y)) << fa[i];
    const h5::Table lx = x.read_table("model_stage/layers"), ly = y.read_table("model_stage/layers");
    EXPECT_EQ(lx.column<double>("rel_err_vs_fp32"), ly.column<double>("rel_err_vs_fp32"));
    const h5::Table kx = x.read_table("kernel_stage/instances"), ky = y.read_table("kernel_stage/instances");
    EXPECT_EQ(kx.column<double>("rel_l2"), ky.column<double>("rel_l2"));
    EXPECT_EQ(kx.column<std::string>("shape"), ky.column<std::string>("shape"));
  }
}

}  // namespace
}  // namespace fk
