// fused_moe's two CUDA paths at prefill sizes (label gpu): cuBLASLt's pointer-array
// batched GEMMs over 128-row expert tiles (the default there) and the own grouped GEMM
// kernels (FK_MOE_CUBLASLT=0) each match the fp64 reference, with uneven experts (one
// with three tiles, one with none, partial tiles) in fp16 and bf16; the batched GEMMs
// show in LinearLt's plans; a bad setting names the variable. Each test is its own
// process (gtest_discover_tests), so the settings do not leak.
#include "core/error.h"
#include "kernels/backends.h"
#include "kernels/compare.h"
#include "kernels/cuda/ops/linear_lt.h"
#include "kernels/op.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace fk::kernels {
namespace {

// Runs fused_moe on the CUDA backend and compares with the fp64 reference. Token r
// chooses experts 0 and 1 + r % 2 (expert 0: every token, three tiles; expert 3: none).
// oai: gpt-oss' experts (biases, clamped SwiGLU with alpha 1.702 and limit 7; the
// limit is low enough against these values that both clamps bite).
void expect_matches_reference(DType dtype, int64_t inter = 200, bool oai = false) {
  register_builtin_ops();
  const auto backend = backend_create(DeviceKind::kCuda, 0);
  const OpDef& def = OpRegistry::global().def("fused_moe");
  const OpShape shape{{{"tokens", 300}, {"hidden", 256}, {"experts", 4}, {"inter", inter}, {"k", 2}, {"bias", oai}},
                      oai ? std::vector<double>{3, 1.702, 0.5} : std::vector<double>{0, 0, 0}};
  OpCall call = def.make(shape, dtype, RngStream(7, "moe-paths"));
  Tensor& ids = call.args[5];
  for (int64_t r = 0; r < 300; ++r) {
    ids.data_as<int32_t>()[r * 2] = 0;
    ids.data_as<int32_t>()[r * 2 + 1] = static_cast<int32_t>(1 + r % 2);
  }
  const auto ref = run_reference(def, call);
  OpCall dev = backend->to_device(call);
  backend->activate();
  backend->baseline("fused_moe")->run(dev);
  const Tensor out = backend->to_host(dev.args[0]);
  ASSERT_EQ(backend->audit(), "");
  const Comparison cmp = compare(out, ref.at(0), def.tolerance_for(dtype));
  EXPECT_TRUE(cmp.passed) << dtype_name(dtype) << ": matched " << cmp.matched_fraction << " rel_l2 " << cmp.rel_l2;
  EXPECT_LT(cmp.rel_l2, dtype == DType::kF16 ? 2e-3 : 1.6e-2) << dtype_name(dtype);
}

// Whether LinearLt has seen a batched gate/up problem of `inter` (n = 2 inter, k = 256):
// plans persist in the process, so each test asks about a size of its own.
bool batched_plan_listed(int64_t inter) {
  const std::string gate_up = fmt::format(" n {} k 256 ", 2 * inter);
  for (const auto& line : cuda::LinearLt::instance().plans())
    if (line.find("pointer arrays") != std::string::npos && line.find(gate_up) != std::string::npos) return true;
  return false;
}

TEST(FusedMoePaths, CublasLtTilesMatchTheReference) {
  ::setenv("FK_MOE_CUBLASLT", "1", 1);
  ::unsetenv("FK_MOE_TILE_ROWS");
  for (DType dt : {DType::kBF16, DType::kF16}) expect_matches_reference(dt);
  EXPECT_TRUE(batched_plan_listed(200)) << "the tiled path did not ask cuBLASLt for its batched GEMMs";
}

// Taller tiles (the height chosen for 512+ rows an expert, and 512) over the same
// uneven experts: fewer, partly filled slots.
TEST(FusedMoePaths, CublasLtTallerTilesMatchTheReference) {
  ::setenv("FK_MOE_CUBLASLT", "1", 1);
  for (const char* rows : {"256", "512"}) {
    ::setenv("FK_MOE_TILE_ROWS", rows, 1);
    for (DType dt : {DType::kBF16, DType::kF16}) expect_matches_reference(dt, 216);
  }
  EXPECT_TRUE(batched_plan_listed(216));
}

// gpt-oss' experts on both paths: biases and the clamped SwiGLU in the tiled act and
// combine, and in the own kernels' epilogues.
TEST(FusedMoePaths, BiasesAndClampedSwigluMatchTheReference) {
  ::unsetenv("FK_MOE_TILE_ROWS");
  for (const char* lt : {"1", "0"}) {
    ::setenv("FK_MOE_CUBLASLT", lt, 1);
    for (DType dt : {DType::kBF16, DType::kF16}) expect_matches_reference(dt, 224, true);
  }
  EXPECT_TRUE(batched_plan_listed(224));
}

TEST(FusedMoePaths, OwnKernelsMatchTheReference) {
  ::setenv("FK_MOE_CUBLASLT", "0", 1);
  ::unsetenv("FK_MOE_TILE_ROWS");
  for (DType dt : {DType::kBF16, DType::kF16}) expect_matches_reference(dt, 208);
  EXPECT_FALSE(batched_plan_listed(208)) << "FK_MOE_CUBLASLT=0 still ran cuBLASLt's batched GEMMs";
}

// The error of a run with environment variable `var` set to `value` ("" if none).
std::string error_with(const char* var, const char* value) {
  ::setenv(var, value, 1);
  try {
    expect_matches_reference(DType::kBF16);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FusedMoePaths, BadSettingsNameTheVariable) {
  ::unsetenv("FK_MOE_TILE_ROWS");
  const std::string cublaslt = error_with("FK_MOE_CUBLASLT", "maybe");
  EXPECT_NE(cublaslt.find("FK_MOE_CUBLASLT=maybe"), std::string::npos) << cublaslt;
  ::unsetenv("FK_MOE_CUBLASLT");
  const std::string rows = error_with("FK_MOE_TILE_ROWS", "100");
  EXPECT_NE(rows.find("FK_MOE_TILE_ROWS=100"), std::string::npos) << rows;
}

}  // namespace
}  // namespace fk::kernels
