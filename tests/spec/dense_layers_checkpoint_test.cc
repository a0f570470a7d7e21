// The architecture fields added for HF checkpoints: moe.dense_layers (dense MLPs
// anywhere in an MoE stack) and the top-level checkpoint path.
#include "core/spec/architecture_load.h"
#include "core/spec/architecture_write.h"
#include "core/spec/json_io.h"
#include "core/spec/spec_file.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fk::testing {
namespace {

namespace fs = std::filesystem;

const char* kMoe = "moe: {num_experts: 4, experts_per_token: 2, moe_intermediate_size: 128";

// The base spec without its tiny preset (2 layers), so layer lists can name layers >= 2.
std::string with_moe(const std::string& extra) {
  const std::string base = base_architecture_yaml();
  return base.substr(0, base.find("presets:")) + kMoe + extra + "}\n";
}

TEST(ArchitectureDenseLayers, MarkLayersDenseAnywhere) {
  spec::Diagnostics diags;
  auto doc = spec::spec_load_string(with_moe(", first_dense_layers: 1, dense_layers: [3, 5]"), "t.yaml", diags);
  ASSERT_TRUE(doc.has_value()) << diags.to_string();
  const auto& a = std::get<spec::ArchitectureDoc>(*doc).full;
  EXPECT_EQ(a.moe.dense_layers, (std::vector<int64_t>{3, 5}));
  for (int64_t l : {0, 3, 5}) EXPECT_FALSE(a.layer_is_moe(l)) << l;
  for (int64_t l : {1, 2, 4, 6, 31}) EXPECT_TRUE(a.layer_is_moe(l)) << l;
}

TEST(ArchitectureDenseLayers, PresetsAreCheckedAgainstTheirOwnLayers) {
  // The tiny preset has 2 layers: dense layer 5 is not one of them.
  const auto d = parse_errors(base_architecture_yaml() + kMoe + ", dense_layers: [5]}\n");
  EXPECT_NE(d.to_string().find("presets.tiny.moe.dense_layers: [0] = 5 is not a layer of a 2-layer model"),
            std::string::npos)
      << d.to_string();
}

TEST(ArchitectureDenseLayers, Validation) {
  auto errors = [](const std::string& text) { return parse_errors(text).to_string(); };
  EXPECT_NE(
      errors(with_moe(", dense_layers: [40]")).find("moe.dense_layers: [0] = 40 is not a layer of a 32-layer model"),
      std::string::npos)
      << errors(with_moe(", dense_layers: [40]"));
  EXPECT_NE(errors(with_moe(", dense_layers: [2, 1]")).find("[1] = 1 follows 2; list the layers in ascending order"),
            std::string::npos);
  EXPECT_NE(errors(with_moe(", dense_layers: [-1]")).find("moe.dense_layers[0]"), std::string::npos);
  EXPECT_NE(errors(with_moe(", dense_layers: [a]")).find("expected an integer"), std::string::npos);
  EXPECT_NE(errors(with_moe(", dense_layers: 3")).find("expected a list of integers"), std::string::npos);
  EXPECT_TRUE(parse_errors(with_moe(", dense_layers: []")).ok()) << errors(with_moe(", dense_layers: []"));
}

TEST(ArchitectureDenseLayers, AllDenseIsAnError) {
  std::string list;
  for (int l = 1; l < 32; ++l) list += (list.empty() ? "" : ", ") + std::to_string(l);
  const auto d = parse_errors(with_moe(", first_dense_layers: 1, dense_layers: [" + list + "]"));
  EXPECT_NE(d.to_string().find("leaves no MoE layer in 32 layers"), std::string::npos) << d.to_string();
}

TEST(ArchitectureDenseLayers, JsonKeepsThemAndOmitsThemWhenEmpty) {
  spec::Diagnostics diags;
  const auto doc = spec::spec_load_string(with_moe(""), "t.yaml", diags);
  ASSERT_TRUE(doc.has_value()) << diags.to_string();
  spec::Architecture a = std::get<spec::ArchitectureDoc>(*doc).full;
  EXPECT_FALSE(spec::to_json(a)["moe"].contains("dense_layers")) << "job ids of existing specs stay the same";
  EXPECT_FALSE(spec::to_json(a).contains("checkpoint"));
  a.moe.dense_layers = {1, 4};
  a.checkpoint = "/w/model.safetensors";
  const auto back = spec::architecture_from_json(spec::to_json(a), "");
  EXPECT_EQ(back.moe.dense_layers, a.moe.dense_layers);
  EXPECT_EQ(back.checkpoint, a.checkpoint);
}

TEST(ArchitectureHead, JsonKeepsBiasAndLogitScaleAndOmitsThemWhenUnset) {
  spec::Diagnostics diags;
  const auto doc = spec::spec_load_string(base_architecture_yaml(), "t.yaml", diags);
  ASSERT_TRUE(doc.has_value()) << diags.to_string();
  spec::Architecture a = std::get<spec::ArchitectureDoc>(*doc).full;
  EXPECT_FALSE(spec::to_json(a)["head"].contains("bias")) << "job ids of existing specs stay the same";
  EXPECT_FALSE(spec::to_json(a)["head"].contains("logit_scale"));
  a.head.bias = true;
  a.head.logit_scale = 0.0625;
  a.norm.placement = spec::NormPlacement::kParallelShared;
  const auto back = spec::architecture_from_json(spec::to_json(a), "");
  EXPECT_TRUE(back.head.bias);
  EXPECT_EQ(back.head.logit_scale, 0.0625);
  EXPECT_EQ(back.norm.placement, spec::NormPlacement::kParallelShared);
  EXPECT_EQ(back, a);
}

TEST(ArchitectureCheckpoint, RelativeToTheSpecFolderAndNotInPresets) {
  TempSpecs tmp;
  const std::string text = replace_line(base_architecture_yaml(), "source:", "source: t\ncheckpoint: ../weights/m");
  const std::string file = tmp.write("architectures/m.yaml", text);
  spec::Diagnostics diags;
  const auto doc = spec::architecture_load_file(file, diags);
  ASSERT_TRUE(doc.has_value()) << diags.to_string();
  EXPECT_EQ(doc->full.checkpoint, (fs::path(tmp.root()) / "weights/m").lexically_normal().string());
  ASSERT_TRUE(doc->select("tiny").has_value());
  EXPECT_EQ(doc->select("tiny")->checkpoint, "") << "a preset's sizes do not match the checkpoint";

  const std::string abs = replace_line(base_architecture_yaml(), "source:", "source: t\ncheckpoint: /data/ckpt");
  const auto d2 = spec::architecture_load_file(tmp.write("architectures/a.yaml", abs), diags);
  ASSERT_TRUE(d2.has_value()) << diags.to_string();
  EXPECT_EQ(d2->full.checkpoint, "/data/ckpt");

  const std::string none = replace_line(base_architecture_yaml(), "source:", "source: t\ncheckpoint: null");
  EXPECT_TRUE(parse_errors(none).ok());
  const std::string empty = replace_line(base_architecture_yaml(), "source:", "source: t\ncheckpoint: \"\"");
  EXPECT_NE(parse_errors(empty).to_string().find("checkpoint: found an empty path"), std::string::npos);
  const std::string in_preset = base_architecture_yaml() + "    checkpoint: x\n";
  EXPECT_NE(parse_errors(in_preset).to_string().find("presets.tiny.checkpoint: unknown field"), std::string::npos)
      << parse_errors(in_preset).to_string();
}

TEST(ArchitectureWrite, WrittenSpecsLoadBackEqual) {
  spec::Diagnostics diags;
  for (const auto& e : fs::directory_iterator(fs::path(FK_SOURCE_DIR) / "specs" / "architectures")) {
    const auto doc = spec::architecture_load_file(e.path().string(), diags);
    ASSERT_TRUE(doc.has_value()) << diags.to_string();
    spec::Architecture a = doc->full;
    // Dense layers too, where the model allows them (gpt-oss' clamped SwiGLU has no dense baseline).
    if (a.moe.enabled() && !a.moe.swiglu_limit) a.moe.dense_layers = {1};
    const std::string text = spec::architecture_to_yaml(a, {"header"});
    EXPECT_EQ(text.rfind("# header\nkind: architecture\n", 0), 0u) << text;
    const auto back = spec::spec_load_string(text, "w.yaml", diags);
    ASSERT_TRUE(back.has_value()) << e.path() << "\n" << diags.to_string() << text;
    spec::Architecture got = std::get<spec::ArchitectureDoc>(*back).full;
    // An empty layer pattern is left out, which reads back the same.
    EXPECT_EQ(spec::to_json(got).dump(1), spec::to_json(a).dump(1)) << text;
  }
}

}  // namespace
}  // namespace fk::testing
