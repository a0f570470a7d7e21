// The Mamba family's spec side: the shipped spec loads and round-trips; a field of
// another family, a missing ssm section and bad ssm values are errors at their line;
// layouts that cannot split the mixer are named; the memory estimate holds a
// recurrent state that does not grow with the context. Mamba-2 (ssm.version 2): the
// shipped Codestral spec round-trips and is counted as published; its fields are
// checked against each other and against version 1; TP splits heads and groups, and a
// tp that divides neither is named.
#include "core/spec/architecture_write.h"
#include "core/spec/families/mamba.h"
#include "core/spec/family.h"
#include "core/spec/memory.h"
#include "core/spec/spec_file.h"
#include "core/spec/workload.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

namespace fk::spec {
namespace {

using testing::replaced;
std::string spec_text(const std::string& name) { return testing::shipped_architecture_text(name); }
std::string shipped_text() { return spec_text("mamba-2.8b"); }
std::string load_errors(const std::string& text) { return testing::load_errors(text, "m.yaml"); }

TEST(MambaSpec, ShippedSpecLoadsWithItsPublishedSizesAndRoundTrips) {
  Diagnostics d;
  const auto doc = architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/mamba-2.8b.yaml", d);
  ASSERT_TRUE(doc.has_value()) << d.to_string();
  const Architecture& a = doc->full;
  EXPECT_EQ(a.model_family, "mamba");
  EXPECT_EQ(a.hidden_size, 2560);
  EXPECT_EQ(a.intermediate_size, 5120);
  EXPECT_EQ(a.sections.get<spec::SsmSpec>().state_size, 16);
  EXPECT_EQ(a.sections.get<spec::SsmSpec>().time_step_rank, 160);
  EXPECT_TRUE(a.embedding.tied);
  const Architecture t = *doc->select("tiny");
  EXPECT_EQ(t.sections.get<spec::SsmSpec>().time_step_rank, 4);
  EXPECT_TRUE(t.sections.get<spec::SsmSpec>().conv_bias) << "a preset keeps the fields it does not give";
  const std::string written = testing::expect_round_trip(a);
  EXPECT_EQ(written.find("num_attention_heads"), std::string::npos) << "only the family's fields are written";
}

TEST(MambaSpec, FieldsOfAnotherFamilyAndBadSsmValuesAreErrorsAtTheirLine) {
  const std::string base = shipped_text();
  std::string e = load_errors(replaced(base, "vocab_size: 50280\n", "vocab_size: 50280\nnum_attention_heads: 32\n"));
  EXPECT_NE(e.find("num_attention_heads"), std::string::npos) << e;
  EXPECT_NE(e.find("does not apply to model_family 'mamba'"), std::string::npos) << e;
  e = load_errors(replaced(base, "ssm: {state_size: 16, conv_kernel: 4, time_step_rank: 160, conv_bias: true, proj_bias: false}\n", ""));
  EXPECT_NE(e.find("ssm"), std::string::npos) << e;
  e = load_errors(replaced(base, "conv_kernel: 4, time_step_rank: 160", "conv_kernel: 9, time_step_rank: 160"));
  EXPECT_NE(e.find("ssm.conv_kernel"), std::string::npos) << e;
  EXPECT_NE(e.find("m.yaml:"), std::string::npos) << "the error names the file and line: " << e;
  e = load_errors(replaced(base, "norm: {kind: rmsnorm", "norm: {kind: layernorm"));
  EXPECT_NE(e.find("rmsnorm"), std::string::npos) << e;
  // The transformer family does not take an ssm section.
  e = load_errors(replaced(spec_text("llama-3.1-8b"), "vocab_size: 128256\n",
                           "vocab_size: 128256\nssm: {state_size: 16, time_step_rank: 8}\n"));
  EXPECT_NE(e.find("does not apply to model_family 'transformer'"), std::string::npos) << e;
}

TEST(MambaSpec, LayoutsThatCannotSplitTheMixerAreNamed) {
  Diagnostics d;
  const auto doc = architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/mamba-2.8b.yaml", d);
  ASSERT_TRUE(doc.has_value());
  const Architecture a = *doc->select("tiny");  // intermediate 128, 4 layers
  const Workload w = testing::test_workload(4, 16);
  EXPECT_TRUE(layout_misfits(a, w, {4, 4, 1}).empty());
  const auto m = layout_misfits(a, w, {3, 8, 1});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NE(m[0].find("tp (3) does not divide intermediate_size (128)"), std::string::npos) << m[0];
  EXPECT_NE(m[1].find("pp (8) is more than num_hidden_layers (4)"), std::string::npos) << m[1];
}

TEST(MambaSpec, TheRecurrentStateDoesNotGrowWithTheContext) {
  Diagnostics d;
  const auto doc = architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/mamba-2.8b.yaml", d);
  ASSERT_TRUE(doc.has_value());
  const Architecture& a = doc->full;
  Workload w = testing::test_workload(8, 512);
  const MemoryEstimate short_ctx = memory_estimate(a, w, {1, 1, 1}, DeviceKind::kCuda);
  w.seq_len = 32768;
  const MemoryEstimate long_ctx = memory_estimate(a, w, {1, 1, 1}, DeviceKind::kCuda);
  EXPECT_EQ(short_ctx.kv_cache_bytes, long_ctx.kv_cache_bytes);
  // 64 layers x 8 sequences x 5120 channels x (3 conv rows + 16 states) x 4 bytes.
  EXPECT_EQ(short_ctx.kv_cache_bytes, 64LL * 8 * 5120 * (3 + 16) * 4);
  EXPECT_GT(long_ctx.activation_bytes, short_ctx.activation_bytes);
  // About 2.77B parameters (the published 2.8B), tied head counted once.
  EXPECT_NEAR(static_cast<double>(short_ctx.parameters), 2.77e9, 0.03e9);
  const MemoryEstimate tp2 = memory_estimate(a, w, {2, 1, 1}, DeviceKind::kCuda);
  EXPECT_NEAR(static_cast<double>(tp2.parameters) / static_cast<double>(long_ctx.parameters), 0.5, 0.01);
}

std::string codestral_text() { return spec_text("mamba-codestral-7b"); }

TEST(Mamba2Spec, ShippedSpecRoundTripsAndCountsThePublishedParameters) {
  Diagnostics d;
  const auto doc = spec_load_string(codestral_text(), "c.yaml", d);
  ASSERT_TRUE(doc.has_value()) << d.to_string();
  const Architecture& a = std::get<ArchitectureDoc>(*doc).full;
  const SsmSpec& m = a.sections.get<SsmSpec>();
  EXPECT_TRUE(m.mamba2());
  EXPECT_EQ(m.conv_dim(a.intermediate_size), 8192 + 2 * 8 * 128);
  const std::string written = testing::expect_round_trip(a);
  EXPECT_EQ(written.find("time_step_rank"), std::string::npos) << written;
  const Workload w = testing::test_workload(4, 1024);
  const MemoryEstimate e = memory_estimate(a, w, {1, 1, 1}, DeviceKind::kCuda);
  // Codestral is a 7.3B model: per layer in_proj (8192 + 10240 + 128) x 4096, out_proj
  // 4096 x 8192, the conv, the norms; the embedding and the untied head.
  EXPECT_NEAR(static_cast<double>(e.parameters), 7.29e9, 0.03e9);
  // 64 layers x 4 sequences x (3 conv rows x 10240 + 8192 x 128 states) x 4 bytes.
  EXPECT_EQ(e.kv_cache_bytes, 64LL * 4 * (3 * 10240 + 8192 * 128) * 4);
  // TP splits the heads and the groups of B and C: up to 8 ranks (the groups).
  for (int64_t tp : {2, 4, 8}) EXPECT_TRUE(layout_misfits(a, w, {tp, 1, 1}).empty()) << "tp " << tp;
  EXPECT_TRUE(layout_misfits(a, w, {1, 2, 1}).empty());
  const auto sixteen = layout_misfits(a, w, {16, 1, 1});
  ASSERT_EQ(sixteen.size(), 1u);
  EXPECT_NE(sixteen[0].find("tp (16) does not divide ssm.n_groups (8)"), std::string::npos) << sixteen[0];
  const auto three = layout_misfits(a, w, {3, 1, 1});
  ASSERT_FALSE(three.empty());
  EXPECT_NE(three[0].find("ssm.num_heads (128)"), std::string::npos) << three[0];
  // A rank of tp 2 holds half of every layer but the whole gated-norm weight, and half of
  // the state (its heads' conv channels and scans).
  const MemoryEstimate tp2 = memory_estimate(a, w, {2, 1, 1}, DeviceKind::kCuda);
  const int64_t in_l = 4096 + (4096 + 2 * 4 * 128) + 64;
  EXPECT_EQ(tp2.largest_layer_parameters,
            in_l * 4096 + (4096 + 2 * 4 * 128) * (4 + 1) + 3 * 64 + 8192 + 4096 * 4096 + 4096);
  EXPECT_EQ(tp2.kv_cache_bytes, 64LL * 4 * (3 * (4096 + 2 * 4 * 128) + 4096 * 128) * 4);
}

TEST(Mamba2Spec, FieldsThatDisagreeAreErrorsAtTheirLine) {
  const std::string base = codestral_text();
  std::string e = load_errors(replaced(base, "head_dim: 64", "head_dim: 32"));
  EXPECT_NE(e.find("ssm.num_heads"), std::string::npos) << e;
  EXPECT_NE(e.find("num_heads x head_dim (128 x 32) must be intermediate_size (8192)"), std::string::npos) << e;
  EXPECT_NE(e.find("m.yaml:"), std::string::npos) << e;
  e = load_errors(replaced(base, "n_groups: 8}", "n_groups: 3}"));
  EXPECT_NE(e.find("n_groups (3) must divide num_heads (128)"), std::string::npos) << e;
  e = load_errors(replaced(base, "n_groups: 8}", "n_groups: 8, time_step_rank: 256}"));
  EXPECT_NE(e.find("does not apply to Mamba-2 layers"), std::string::npos) << e;
  e = load_errors(replaced(base, "n_groups: 8}", "n_groups: 8, time_step_limit_min: 0.2, time_step_limit_max: 0.1}"));
  EXPECT_NE(e.find("ssm.time_step_limit_min"), std::string::npos) << e;
  e = load_errors(replaced(base, "num_heads: 128, ", ""));
  EXPECT_NE(e.find("num_heads"), std::string::npos) << e;
  // Mamba-1 refuses Mamba-2's fields.
  e = load_errors(replaced(shipped_text(), "proj_bias: false}", "proj_bias: false, n_groups: 2}"));
  EXPECT_NE(e.find("applies to Mamba-2 layers only"), std::string::npos) << e;
  e = load_errors(replaced(base, "version: 2", "version: 3"));
  EXPECT_NE(e.find("ssm.version"), std::string::npos) << e;
}

}  // namespace
}  // namespace fk::spec
