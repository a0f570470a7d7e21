// The ConvNeXt family's spec side (core/spec/families/convnext.h): the shipped ConvNeXt
// V2-Base loads as published (88M parameters) and round-trips; it has no vocabulary
// and takes images; bad `convnext:` fields and the rules against the rest of the
// architecture are errors at their line; a workload runs as one pass over an image batch
// (one output row an image), a decode workload and tensor parallelism do not fit; the
// memory estimate's parameters are the published count. fk import-hf for convnext and
// convnextv2, and its refusals.
#include "core/spec/families/convnext.h"
#include "core/spec/family.h"
#include "core/spec/hf_config.h"
#include "core/spec/memory.h"
#include "core/spec/spec_file.h"
#include "core/spec/workload.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

namespace fk::testing {
namespace {

using Json = nlohmann::json;

TEST(ConvNextSpec, ShippedSpecLoadsAsPublishedAndRoundTrips) {
  const spec::Architecture a = shipped_architecture("convnextv2-base").full;
  const spec::ConvNextSpec& c = a.sections.get<spec::ConvNextSpec>();
  EXPECT_TRUE(c.v2());
  EXPECT_EQ(c.stages(), 4);
  EXPECT_EQ(a.num_hidden_layers, 4);
  EXPECT_EQ(a.hidden_size, 1024);
  EXPECT_EQ(a.vocab_size, 0);
  EXPECT_EQ(c.side(0), 96);  // 384 / 4, then halved
  EXPECT_EQ(c.side(3), 12);
  EXPECT_EQ(spec::fastkernels_category_of(a), "Edge & detection");
  const auto image = spec::architecture_image_input(a);
  ASSERT_TRUE(image.has_value());
  EXPECT_EQ(image->channels, 3);
  EXPECT_EQ(image->size, 384);
  EXPECT_EQ(expect_round_trip(a).find("\nvocab_size:"), std::string::npos) << "no vocabulary is written";
  const auto tiny = shipped_architecture("convnextv2-base").select("tiny");
  ASSERT_TRUE(tiny.has_value());
  EXPECT_EQ(tiny->sections.get<spec::ConvNextSpec>().side(3), 2);
  EXPECT_TRUE(tiny->sections.get<spec::ConvNextSpec>().v2());
  // A token model takes no images.
  EXPECT_FALSE(spec::architecture_image_input(shipped_architecture("llama-3.1-8b").full).has_value());
}

TEST(ConvNextSpec, BadFieldsAndRulesAreErrorsAtTheirLine) {
  const std::string text = shipped_architecture_text("convnextv2-base");
  struct Case {
    std::string from, to, expect;
  };
  const std::vector<Case> cases = {
      {"num_hidden_layers: 4", "num_hidden_layers: 3", "the number of stages"},
      {"hidden_size: 1024\n", "hidden_size: 512\n", "the last stage's width"},
      {"hidden_sizes: [128, 256, 512, 1024]}", "hidden_sizes: [128, 256, 1024]}", "one width a stage"},
      {"image_size: 384, patch_size: 4", "image_size: 20, patch_size: 4", "no pixel"},
      {"version: 2, ", "version: 3, ", "convnext.version"},
      {"patch_size: 4, num_channels", "patch_size: 4, kernel_size: 6, num_channels", "must be odd"},
      {"patch_size: 4, num_channels", "patch_size: 4, layer_scale: true, num_channels", "V1 only"},
      {"depths: [3, 3, 27, 3]", "depths: [3, 0, 27, 3]", "convnext.depths"},
      {"norm: {kind: layernorm", "norm: {kind: rmsnorm", "norm.kind"},
      {"head: {kind: none", "head: {kind: lm", "head.kind"},
      {"gated: false", "gated: true", "mlp.gated"},
      {"hidden_size: 1024\n", "hidden_size: 1024\nvocab_size: 100\n", "vocab_size"},
      {"hidden_size: 1024\n", "hidden_size: 1024\nnum_attention_heads: 8\n", "num_attention_heads"},
  };
  for (const Case& c : cases) {
    const std::string bad = replaced(text, c.from, c.to);
    ASSERT_NE(bad, text) << c.from;
    const std::string e = load_errors(bad, "cnx.yaml");
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.from << " -> " << c.to << ": " << e;
    EXPECT_NE(e.find("cnx.yaml:"), std::string::npos) << e;
  }
  // A preset may shrink the stages, not change their number.
  const std::string preset = replaced(text, "depths: [1, 1, 2, 1]", "depths: [1, 1, 2]");
  EXPECT_NE(load_errors(preset).find("stages"), std::string::npos) << load_errors(preset);
}

TEST(ConvNextSpec, ImageBatchesOnePassNoTensorParallelism) {
  const spec::Architecture a = shipped_architecture("convnextv2-base").full;
  spec::Workload w;
  w.name = "prefill-512";
  w.batch = 8;
  w.seq_len = 512;
  w.decode_steps = 2;
  const spec::Workload run = spec::family_workload(a, w);
  EXPECT_EQ(run.seq_len, 1);  // one pooled row an image
  EXPECT_EQ(run.decode_steps, 0);
  EXPECT_TRUE(spec::layout_misfits(a, run, spec::Layout{1, 4, 2}).empty());
  const auto tp = spec::layout_misfits(a, run, spec::Layout{2, 1, 1});
  ASSERT_EQ(tp.size(), 1u);
  EXPECT_NE(tp[0].find("not tensor-parallel"), std::string::npos) << tp[0];
  EXPECT_FALSE(spec::layout_misfits(a, run, spec::Layout{1, 5, 1}).empty()) << "more pipeline stages than stages";
  spec::Workload decode = w;
  decode.phase = spec::Phase::kDecode;
  const auto d = spec::layout_misfits(a, spec::family_workload(a, decode), spec::Layout{});
  ASSERT_FALSE(d.empty());
  EXPECT_NE(d[0].find("cannot decode"), std::string::npos) << d[0];
}

TEST(ConvNextSpec, MemoryCountsThePublishedParametersAndTheMaps) {
  const spec::Architecture a = shipped_architecture("convnextv2-base").full;
  spec::Workload w;
  w.name = "images";
  w.batch = 4;
  w = spec::family_workload(a, w);
  const spec::MemoryEstimate m = spec::memory_estimate(a, w, spec::Layout{}, DeviceKind::kCpu);
  // ConvNeXt V2-B: 88.7M parameters without its classifier (the paper's 89M).
  EXPECT_NEAR(static_cast<double>(m.parameters), 87.7e6, 1.0e6);
  // Two pipeline stages split the stages and the stem's pixels stay on the first.
  const spec::MemoryEstimate p = spec::memory_estimate(a, w, spec::Layout{1, 2, 1}, DeviceKind::kCpu);
  EXPECT_LT(p.parameters, m.parameters);
  EXPECT_LT(p.activation_bytes, m.activation_bytes * 2);
  spec::Workload twice = w;
  twice.batch = 8;
  EXPECT_GT(spec::memory_estimate(a, twice, spec::Layout{}, DeviceKind::kCpu).activation_bytes,
            m.activation_bytes * 3 / 2);
}

Json convnextv2_base() {
  return Json::parse(R"({"model_type": "convnextv2", "architectures": ["ConvNextV2ForImageClassification"],
    "depths": [3, 3, 27, 3], "hidden_sizes": [128, 256, 512, 1024], "num_stages": 4, "patch_size": 4,
    "num_channels": 3, "image_size": 384, "hidden_act": "gelu", "layer_norm_eps": 1e-12, "drop_path_rate": 0.0,
    "initializer_range": 0.02, "out_features": ["stage4"], "out_indices": [4],
    "stage_names": ["stem", "stage1", "stage2", "stage3", "stage4"], "torch_dtype": "float32"})");
}

TEST(HfImportConvNext, V1AndV2Backbones) {
  const spec::Architecture v2 = spec::hf_config_import(convnextv2_base(), "c/config.json").arch;
  expect_same_model(v2, shipped_architecture("convnextv2-base").full);
  Json v1 = convnextv2_base();
  v1["model_type"] = "convnext";
  v1["layer_scale_init_value"] = 1e-6;
  const spec::Architecture a = spec::hf_config_import(v1, "c/config.json").arch;
  const spec::ConvNextSpec& c = a.sections.get<spec::ConvNextSpec>();
  EXPECT_EQ(a.model_family, "convnext");
  EXPECT_EQ(c.version, 1);
  EXPECT_TRUE(c.layer_scale);
  v1["layer_scale_init_value"] = 0.0;
  EXPECT_FALSE(spec::hf_config_import(v1, "c/config.json").arch.sections.get<spec::ConvNextSpec>().layer_scale);
  // ConvNextConfig's defaults: ConvNeXt-T.
  const Json bare = Json::parse(R"({"model_type": "convnext"})");
  const spec::Architecture t = spec::hf_config_import(bare, "c/config.json").arch;
  EXPECT_EQ(t.sections.get<spec::ConvNextSpec>().depths, (std::vector<int64_t>{3, 3, 9, 3}));
  EXPECT_EQ(t.hidden_size, 768);
}

TEST(HfImportConvNext, WhatItCannotHonourIsRefusedByName) {
  expect_hf_import_errors(convnextv2_base(), {{"num_stages", 3, "num_stages (3)"},
                                              {"depths", Json::array({3, 3}), "num_stages (4)"},
                                              {"hidden_sizes", "wide", "a list"},
                                              {"image_size", 16, "no pixel"},
                                              {"hidden_act", "quick_gelu", "hidden_act"}});
}

}  // namespace
}  // namespace fk::testing
