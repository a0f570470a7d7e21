// fused_moe's CUDA paths (label gpu). At prefill sizes cuBLASLt's pointer-array batched
// GEMMs over 128-row expert tiles (the default there) and the own grouped GEMM kernels
// (FK_MOE_CUBLASLT=0) each match the fp64 reference, with uneven experts (one with three
// tiles, one with none, partial tiles) in fp16 and bf16; the batched GEMMs show in
// LinearLt's plans. At decode sizes the GEMV form (the default there) and the grouped
// GEMMs (FK_MOE_GEMV=0) match it with 1 to 12 pairs an expert, in every dtype; the
// tracer shows which kernels ran. A bad setting names the variable. Each test is its own
// process (gtest_discover_tests), so the settings do not leak.
#include "core/error.h"
#include "kernels/backend.h"
#include "kernels/backends.h"
#include "kernels/compare.h"
#include "kernels/cuda/ops/linear_lt.h"
#include "kernels/op.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

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

// A decode step's fused_moe (12 tokens, 3 slots, 10 experts: 36 pairs) on the CUDA
// backend against the fp64 reference; returns the names of the device work the call ran
// (the backend's tracer). Token r's slots: expert 0; 1 + r % 3; 4 for r = 0, 5 for r < 3,
// 6 for r < 6, else 7. So expert 0 has 12 pairs (a group of 8, then 4), experts 1 to 3
// four each, 4 one, 5 two, 6 three, 7 six, and 8 and 9 none.
std::vector<std::string> decode_call_names(DType dtype, bool oai) {
  register_builtin_ops();
  const auto backend = backend_create(DeviceKind::kCuda, 0);
  const OpDef& def = OpRegistry::global().def("fused_moe");
  // 36 pairs over 40 experts (the GEMV form's bound: one an expert on average), most of
  // them on experts 0 to 7.
  const OpShape shape{{{"tokens", 12}, {"hidden", 264}, {"experts", 40}, {"inter", 120}, {"k", 3}, {"bias", oai}},
                      oai ? std::vector<double>{3, 1.702, 0.5} : std::vector<double>{0, 0, 0}};
  OpCall call = def.make(shape, dtype, RngStream(11, "moe-decode"));
  int32_t* ids = call.args[5].data_as<int32_t>();
  for (int32_t r = 0; r < 12; ++r) {
    ids[r * 3] = 0;
    ids[r * 3 + 1] = 1 + r % 3;
    ids[r * 3 + 2] = r == 0 ? 4 : r < 3 ? 5 : r < 6 ? 6 : 7;
  }
  const auto ref = run_reference(def, call);
  OpCall dev = backend->to_device(call);
  backend->activate();
  const auto tracer = backend->tracer();
  if (tracer == nullptr) throw Error(ErrorKind::kRuntime, "the CUDA backend has no tracer");
  tracer->begin();
  backend->baseline("fused_moe")->run(dev);
  const DeviceWork work = tracer->end();
  const Tensor out = backend->to_host(dev.args[0]);
  EXPECT_EQ(backend->audit(), "");
  EXPECT_EQ(work.error, "");
  const Comparison cmp = compare(out, ref.at(0), def.tolerance_for(dtype));
  EXPECT_TRUE(cmp.passed) << dtype_name(dtype) << (oai ? " oai" : "") << ": matched " << cmp.matched_fraction
                          << " rel_l2 " << cmp.rel_l2;
  return work.names;
}

bool has_name(const std::vector<std::string>& names, const std::string& part) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

TEST(FusedMoePaths, GemvFormMatchesTheReference) {
  ::unsetenv("FK_MOE_GEMV");
  for (DType dt : {DType::kBF16, DType::kF16, DType::kF32})
    for (bool oai : {false, true}) {
      const std::vector<std::string> names = decode_call_names(dt, oai);
      // gate/up, down, combine: no routing, no memset.
      EXPECT_EQ(names.size(), 3u) << fmt::format("{}", fmt::join(names, ", "));
      EXPECT_TRUE(has_name(names, "gemv_kernel")) << fmt::format("{}", fmt::join(names, ", "));
    }
}

TEST(FusedMoePaths, GroupedGemmsAtDecodeSizesMatchTheReference) {
  ::setenv("FK_MOE_GEMV", "0", 1);
  for (DType dt : {DType::kBF16, DType::kF32})
    for (bool oai : {false, true}) {
      const std::vector<std::string> names = decode_call_names(dt, oai);
      EXPECT_FALSE(has_name(names, "gemv_kernel")) << "FK_MOE_GEMV=0 still ran the GEMV form";
      EXPECT_TRUE(has_name(names, "route_count")) << fmt::format("{}", fmt::join(names, ", "));
    }
}

TEST(FusedMoePaths, BadGemvSettingNamesTheVariable) {
  ::setenv("FK_MOE_GEMV", "yes", 1);
  try {
    decode_call_names(DType::kBF16, false);
    FAIL() << "FK_MOE_GEMV=yes was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FK_MOE_GEMV=yes"), std::string::npos) << e.what();
  }
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
