// Vision encoders' spec side (core/spec/families/vision.h): the shipped specs load as
// published (SigLIP's 729 patches from 384 px at patch 14, DINOv2's class token and
// LayerScale) and round-trip; a vision encoder has no vocabulary; bad `vision:` fields and
// the rules against the rest of the architecture are errors at their line; a workload
// runs as an image batch (seq_len the image's tokens, nothing decoded) and a decode
// workload does not fit; the memory estimate counts the patch map, the class token and
// the pixels. fk import-hf for vit, dinov2 and siglip_vision_model, and its refusals.
#include "core/spec/families/vision.h"
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

TEST(VisionSpec, ShippedSpecsLoadAsPublishedAndRoundTrip) {
  const spec::Architecture s = shipped_architecture("siglip-so400m").full;
  const spec::VisionSpec& v = s.sections.get<spec::VisionSpec>();
  EXPECT_EQ(v.patches_per_side(), 27);  // 384 / 14 rounded down: the conv drops 6 pixels
  EXPECT_EQ(v.tokens(), 729);
  EXPECT_EQ(v.patch_values(), 3 * 14 * 14);
  EXPECT_FALSE(v.class_token);
  EXPECT_EQ(s.vocab_size, 0);
  EXPECT_EQ(spec::fastkernels_category_of(s), "Multimodal & encoders");
  EXPECT_EQ(expect_round_trip(s).find("\nvocab_size:"), std::string::npos) << "no vocabulary is written";
  const spec::Architecture d = shipped_architecture("dinov2-large").full;
  const spec::VisionSpec& dv = d.sections.get<spec::VisionSpec>();
  EXPECT_EQ(dv.tokens(), 37 * 37 + 1);
  EXPECT_TRUE(dv.class_token);
  EXPECT_TRUE(dv.layer_scale);
  expect_round_trip(d);
  // The tiny presets shrink the image and keep the structure.
  const auto tiny = shipped_architecture("dinov2-large").select("tiny");
  ASSERT_TRUE(tiny.has_value());
  EXPECT_EQ(tiny->sections.get<spec::VisionSpec>().tokens(), 37);
  EXPECT_TRUE(tiny->sections.get<spec::VisionSpec>().layer_scale);
}

TEST(VisionSpec, BadFieldsAndRulesAreErrorsAtTheirLine) {
  const std::string text = shipped_architecture_text("siglip-so400m");
  struct Case {
    std::string from, to, expect;
  };
  const std::vector<Case> cases = {
      {"max_position_embeddings: 729\n", "max_position_embeddings: 729\nvocab_size: 32000\n",
       "vocab_size: 32000 does not apply"},
      {"max_position_embeddings: 729", "max_position_embeddings: 730", "floor(384 / 14)^2 patches = 729"},
      {"causal: false", "causal: true", "attention.causal"},
      {"head: {kind: none, final_norm: true}", "head: {kind: lm, final_norm: true}", "head.kind"},
      {"position: {kind: learned}", "position: {kind: none}", "position.kind"},
      {"placement: pre", "placement: post", "norm.placement"},
      {"patch_size: 14, num_channels", "patch_size: 400, num_channels", "an image holds no patch"},
      {"patch_size: 14, num_channels", "patch_size: 0, num_channels", "vision.patch_size"},
      {"num_channels: 3", "num_channels: 65", "vision.num_channels"},
      {"image_size: 384, ", "", "vision.image_size"},
  };
  for (const Case& c : cases) {
    const std::string bad = replaced(text, c.from, c.to);
    ASSERT_NE(bad, text) << c.from;
    const std::string e = load_errors(bad, "siglip.yaml");
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.from << " -> " << c.to << ": " << e;
    EXPECT_NE(e.find("siglip.yaml:"), std::string::npos) << e;
  }
  // Without a vision section the vocabulary is required again.
  const std::string no_vocab = replaced(shipped_architecture_text("bert-base"), "vocab_size: 30522\n", "");
  EXPECT_NE(load_errors(no_vocab).find("vocab_size"), std::string::npos);
}

TEST(VisionSpec, WorkloadsRunAsImageBatchesAndDecodeDoesNotFit) {
  const spec::Architecture a = shipped_architecture("dinov2-large").full;
  spec::Workload prefill;
  prefill.name = "prefill-512";
  prefill.batch = 8;
  prefill.seq_len = 512;
  prefill.decode_steps = 4;
  const spec::Workload run = spec::family_workload(a, prefill);
  EXPECT_EQ(run.seq_len, 1370);
  EXPECT_EQ(run.decode_steps, 0);
  EXPECT_EQ(run.batch, 8);
  EXPECT_EQ(spec::family_workload(a, run), run);  // resolving twice changes nothing
  EXPECT_TRUE(spec::layout_misfits(a, run, spec::Layout{2, 2, 1}).empty());
  spec::Workload decode = prefill;
  decode.phase = spec::Phase::kDecode;
  const auto misfits = spec::layout_misfits(a, spec::family_workload(a, decode), spec::Layout{});
  ASSERT_FALSE(misfits.empty());
  EXPECT_NE(misfits[0].find("encoder"), std::string::npos) << misfits[0];
  // A text model's workload is its own.
  const spec::Architecture llama = shipped_architecture("llama-3.1-8b").full;
  EXPECT_EQ(spec::family_workload(llama, prefill), prefill);
}

TEST(VisionSpec, MemoryCountsThePatchMapClassTokenAndPixels) {
  spec::Architecture a = shipped_architecture("dinov2-large").full;
  spec::Workload w;
  w.name = "images";
  w.batch = 4;
  w = spec::family_workload(a, w);
  const spec::MemoryEstimate m = spec::memory_estimate(a, w, spec::Layout{}, DeviceKind::kCpu);
  // DINOv2-L: 304M parameters (the published ViT-L/14 size).
  EXPECT_NEAR(static_cast<double>(m.parameters), 304.4e6, 0.5e6);
  const int64_t outside = m.parameters - m.layer_parameters;
  const int64_t h = 1024, patch = 3 * 14 * 14;
  EXPECT_EQ(outside, patch * h + h + h + 1370 * h + 2 * h);  // patch map, bias, CLS, positions, final norm
  spec::Architecture no_cls = a;
  no_cls.sections.edit<spec::VisionSpec>().class_token = false;
  no_cls.max_position_embeddings = 1369;
  const spec::MemoryEstimate n =
      spec::memory_estimate(no_cls, spec::family_workload(no_cls, w), spec::Layout{}, DeviceKind::kCpu);
  EXPECT_EQ((m.parameters - m.layer_parameters) - (n.parameters - n.layer_parameters), 2 * h);
}

Json vit_config() {
  return Json::parse(R"({"model_type": "vit", "architectures": ["ViTModel"], "hidden_size": 768,
    "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu",
    "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "initializer_range": 0.02,
    "layer_norm_eps": 1e-12, "image_size": 224, "patch_size": 16, "num_channels": 3, "qkv_bias": true,
    "encoder_stride": 16, "torch_dtype": "float32"})");
}

TEST(HfImportVision, VitDinov2AndSiglipVisionTowers) {
  const spec::Architecture vit = spec::hf_config_import(vit_config(), "v/config.json").arch;
  const spec::VisionSpec& v = vit.sections.get<spec::VisionSpec>();
  EXPECT_EQ(v.image_size, 224);
  EXPECT_EQ(v.patch_size, 16);
  EXPECT_TRUE(v.class_token);
  EXPECT_FALSE(v.layer_scale);
  EXPECT_EQ(vit.max_position_embeddings, 197);
  EXPECT_EQ(vit.vocab_size, 0);
  EXPECT_FALSE(vit.attention.causal);
  EXPECT_EQ(vit.norm.placement, spec::NormPlacement::kPre);
  EXPECT_EQ(vit.norm.kind, spec::NormKind::kLayerNorm);
  EXPECT_DOUBLE_EQ(vit.norm.eps, 1e-12);
  EXPECT_EQ(vit.head.kind, spec::HeadKind::kNone);
  EXPECT_TRUE(vit.head.final_norm);
  EXPECT_EQ(vit.mlp.activation, spec::Activation::kGelu);
  EXPECT_FALSE(vit.mlp.gated);

  // DINOv2-L's published config gives the shipped spec.
  const Json dino = Json::parse(R"({"model_type": "dinov2", "architectures": ["Dinov2Model"], "hidden_size": 1024,
    "num_hidden_layers": 24, "num_attention_heads": 16, "mlp_ratio": 4, "image_size": 518, "patch_size": 14,
    "num_channels": 3, "hidden_act": "gelu", "layer_norm_eps": 1e-6, "layerscale_value": 1.0, "qkv_bias": true,
    "use_swiglu_ffn": false, "drop_path_rate": 0.0, "attention_probs_dropout_prob": 0.0,
    "hidden_dropout_prob": 0.0, "initializer_range": 0.02, "apply_layernorm": true,
    "out_features": ["stage24"], "out_indices": [24], "reshape_hidden_states": true,
    "torch_dtype": "float32"})");
  const spec::Architecture d = spec::hf_config_import(dino, "d/config.json").arch;
  expect_same_model(d, shipped_architecture("dinov2-large").full);

  // SigLIP so400m's vision_config (with the serialized tower's activation and eps).
  const Json sig = Json::parse(R"({"model_type": "siglip_vision_model", "hidden_size": 1152, "image_size": 384,
    "intermediate_size": 4304, "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14,
    "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-6, "num_channels": 3, "attention_dropout": 0.0})");
  const spec::Architecture s = spec::hf_config_import(sig, "s/config.json").arch;
  expect_same_model(s, shipped_architecture("siglip-so400m").full);
}

TEST(HfImportVision, WhatItCannotHonourIsRefusedByName) {
  expect_hf_import_errors(vit_config(), {{"qkv_bias", false, "expected true"},
                                         {"patch_size", 300, "at most image_size (224)"},
                                         {"hidden_act", "quick_gelu", "hidden_act"}});
  Json dino = vit_config();
  dino["model_type"] = "dinov2";
  dino.erase("intermediate_size");
  dino.erase("encoder_stride");
  expect_hf_import_errors(dino, {{"use_swiglu_ffn", true, "SwiGLU"}});
  for (const char* mt : {"siglip", "clip_vision_model", "dinov2_with_registers"}) {
    Json c = vit_config();
    c["model_type"] = mt;
    const std::string e = hf_import_error(c);
    EXPECT_NE(e.find(mt == std::string("siglip") ? "vision_config" : "not supported"), std::string::npos)
        << mt << ": " << e;
  }
}

}  // namespace
}  // namespace fk::testing
