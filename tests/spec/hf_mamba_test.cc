// fk import-hf for model_type mamba (MambaConfig) and mamba2 (Mamba2Config): the HF keys
// become the mamba family's spec (intermediate_size from expand, time_step_rank "auto";
// Mamba-2's heads, groups and time-step limit, python's Infinity in the file), the keys
// of the original mamba_ssm configs are accepted when they agree, and what the family
// cannot run is an error naming the key.
#include "core/error.h"
#include "core/spec/families/mamba.h"
#include "core/spec/hf_config.h"
#include "core/spec/spec_file.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fk::testing {
namespace {

using Json = nlohmann::json;

// The config of state-spaces/mamba-2.8b-hf as shared/reference/architectures.yaml records it.
Json mamba_2_8b() {
  return Json::parse(R"({
    "architectures": ["MambaForCausalLM"], "model_type": "mamba", "_name_or_path": "state-spaces/mamba-2.8b-hf",
    "hidden_size": 2560, "num_hidden_layers": 64, "n_layer": 64, "intermediate_size": 5120, "state_size": 16,
    "conv_kernel": 4, "expand": 2, "time_step_rank": 160, "time_step_min": 0.001, "time_step_max": 0.1,
    "time_step_floor": 0.0001, "time_step_init_scheme": "random", "time_step_scale": 1.0, "vocab_size": 50280,
    "pad_vocab_size_multiple": 8, "hidden_act": "silu", "rms_norm": true, "layer_norm_epsilon": 1e-05,
    "use_bias": false, "use_conv_bias": true, "residual_in_fp32": true, "fused_add_norm": true,
    "rescale_prenorm_residual": false, "initializer_range": 0.1, "bos_token_id": 0, "eos_token_id": 0,
    "pad_token_id": 0, "torch_dtype": "float32", "transformers_version": "4.39.0.dev0", "use_cache": true})");
}

std::string import_error(const Json& config) { return hf_import_error(config, "m/config.json"); }

TEST(HfImportMamba, PublishedConfigGivesTheShippedSpec) {
  const spec::HfImport imp = spec::hf_config_import(mamba_2_8b(), "m/config.json");
  const spec::Architecture& a = imp.arch;
  EXPECT_EQ(a.model_family, "mamba");
  EXPECT_EQ(a.family, "mamba");
  EXPECT_EQ(a.hidden_size, 2560);
  EXPECT_EQ(a.num_hidden_layers, 64);
  EXPECT_EQ(a.intermediate_size, 5120);
  EXPECT_EQ(a.vocab_size, 50280);
  EXPECT_EQ(a.sections.get<spec::SsmSpec>().state_size, 16);
  EXPECT_EQ(a.sections.get<spec::SsmSpec>().conv_kernel, 4);
  EXPECT_EQ(a.sections.get<spec::SsmSpec>().time_step_rank, 160);
  EXPECT_TRUE(a.sections.get<spec::SsmSpec>().conv_bias);
  EXPECT_FALSE(a.sections.get<spec::SsmSpec>().proj_bias);
  EXPECT_EQ(a.norm.kind, spec::NormKind::kRmsNorm);
  EXPECT_DOUBLE_EQ(a.norm.eps, 1e-5);
  EXPECT_TRUE(a.embedding.tied) << "tie_word_embeddings absent: MambaConfig's default";
  EXPECT_EQ(a.hf_id, "state-spaces/mamba-2.8b-hf");
}

TEST(HfImportMamba, DerivedSizesFollowMambaConfig) {
  Json c = mamba_2_8b();
  c.erase("intermediate_size");
  c["time_step_rank"] = "auto";
  c["hidden_size"] = 100;
  c.erase("n_layer");
  const spec::HfImport imp = spec::hf_config_import(c, "m/config.json");
  EXPECT_EQ(imp.arch.intermediate_size, 200);  // int(expand * hidden_size)
  EXPECT_EQ(imp.arch.sections.get<spec::SsmSpec>().time_step_rank, 7);  // ceil(100 / 16)
  EXPECT_NE(imp.arch.source.find("intermediate_size"), std::string::npos) << imp.arch.source;
}

TEST(HfImportMamba, WhatTheFamilyCannotRunIsAnErrorOnItsKey) {
  Json c = mamba_2_8b();
  c["n_layer"] = 48;
  EXPECT_NE(import_error(c).find("m/config.json: n_layer: found 48"), std::string::npos) << import_error(c);
  c = mamba_2_8b();
  c["intermediate_size"] = 5000;
  EXPECT_NE(import_error(c).find("intermediate_size: found 5000, expected expand x hidden_size"), std::string::npos)
      << import_error(c);
  c = mamba_2_8b();
  c["hidden_act"] = "gelu";
  EXPECT_NE(import_error(c).find("hidden_act: found \"gelu\""), std::string::npos) << import_error(c);
  c = mamba_2_8b();
  c["rms_norm"] = false;
  EXPECT_NE(import_error(c).find("rms_norm: found false"), std::string::npos) << import_error(c);
  c = mamba_2_8b();
  c["time_step_rank"] = "half";
  EXPECT_NE(import_error(c).find("time_step_rank: found \"half\", expected an integer or \"auto\""), std::string::npos)
      << import_error(c);
  c = mamba_2_8b();
  c["conv_kernel"] = 16;
  EXPECT_NE(import_error(c).find("conv_kernel"), std::string::npos) << import_error(c);
  c = mamba_2_8b();
  c["ssm_cfg"] = {{"d_state", 32}};
  EXPECT_NE(import_error(c).find("ssm_cfg"), std::string::npos) << import_error(c);
  c = mamba_2_8b();
  c["num_attention_heads"] = 8;  // not a MambaConfig key
  EXPECT_NE(import_error(c).find("num_attention_heads"), std::string::npos) << import_error(c);
}

// mistralai/Mamba-Codestral-7B-v0.1's config.json as shared/reference/architectures.yaml
// records it, written the way python's json writes it (the bare word Infinity).
const char* kCodestral = R"({
  "architectures": ["Mamba2ForCausalLM"], "model_type": "mamba2", "_name_or_path": "mistralai/Mamba-Codestral-7B-v0.1",
  "hidden_size": 4096, "num_hidden_layers": 64, "num_heads": 128, "head_dim": 64, "state_size": 128,
  "n_groups": 8, "conv_kernel": 4, "expand": 2, "chunk_size": 256, "time_step_rank": 256,
  "time_step_limit": [0.0, Infinity], "time_step_min": 0.001, "time_step_max": 0.1, "time_step_floor": 0.0001,
  "vocab_size": 32768, "hidden_act": "silu", "rms_norm": true, "layer_norm_epsilon": 1e-05,
  "norm_before_gate": true, "use_bias": false, "use_conv_bias": true, "residual_in_fp32": true,
  "tie_word_embeddings": false, "bos_token_id": 0, "eos_token_id": 0, "pad_token_id": 0,
  "torch_dtype": "bfloat16", "transformers_version": "4.44.0.dev0"})";

// kCodestral with `from` replaced by `to`.
std::string codestral_with(const std::string& from, const std::string& to) {
  std::string t = kCodestral;
  t.replace(t.find(from), from.size(), to);
  return t;
}

std::string write_config(const std::string& text) {
  const std::string dir = ::testing::TempDir() + "/mamba2-import";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << text;
  return dir + "/config.json";
}

TEST(HfImportMamba2, PublishedConfigFileGivesTheShippedSpec) {
  const spec::HfImport imp = spec::hf_config_import_file(write_config(kCodestral), {});
  const spec::Architecture& a = imp.arch;
  const spec::SsmSpec& m = a.sections.get<spec::SsmSpec>();
  EXPECT_EQ(a.model_family, "mamba");
  EXPECT_EQ(a.family, "mamba2");
  EXPECT_TRUE(m.mamba2());
  EXPECT_EQ(a.hidden_size, 4096);
  EXPECT_EQ(a.intermediate_size, 8192);
  EXPECT_EQ(a.vocab_size, 32768);
  EXPECT_EQ(m.num_heads, 128);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.n_groups, 8);
  EXPECT_EQ(m.state_size, 128);
  EXPECT_EQ(m.conv_kernel, 4);
  EXPECT_TRUE(m.conv_bias);
  EXPECT_FALSE(m.proj_bias);
  EXPECT_EQ(m.time_step_limit_max, 0.0) << "[0, Infinity]: no clamp";
  EXPECT_FALSE(a.embedding.tied);
  // The shipped spec is this import.
  spec::Diagnostics d;
  const auto doc =
      spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/mamba-codestral-7b.yaml", d);
  ASSERT_TRUE(doc.has_value()) << d.to_string();
  EXPECT_EQ(doc->full.sections, a.sections);
  EXPECT_EQ(doc->full.hidden_size, a.hidden_size);
  EXPECT_EQ(doc->full.intermediate_size, a.intermediate_size);
  EXPECT_EQ(doc->full.vocab_size, a.vocab_size);
  EXPECT_EQ(doc->full.num_hidden_layers, a.num_hidden_layers);
  EXPECT_EQ(doc->full.embedding.tied, a.embedding.tied);
}

// transformers 5's save_pretrained writes inf as {"__float__": "Infinity"}.
TEST(HfImportMamba2, Transformers5sInfinityIsNoClamp) {
  const spec::HfImport imp = spec::hf_config_import_file(
      write_config(codestral_with("[0.0, Infinity]", R"([0.0, {"__float__": "Infinity"}])")), {});
  EXPECT_EQ(imp.arch.sections.get<spec::SsmSpec>().time_step_limit_max, 0.0);
  EXPECT_EQ(imp.arch.sections.get<spec::SsmSpec>().time_step_limit_min, 0.0);
}

TEST(HfImportMamba2, FiniteTimeStepLimitIsTheClamp) {
  const spec::HfImport imp =
      spec::hf_config_import(Json::parse(codestral_with("[0.0, Infinity]", "[0.001, 0.5]")), "m/config.json");
  EXPECT_DOUBLE_EQ(imp.arch.sections.get<spec::SsmSpec>().time_step_limit_min, 0.001);
  EXPECT_DOUBLE_EQ(imp.arch.sections.get<spec::SsmSpec>().time_step_limit_max, 0.5);
}

TEST(HfImportMamba2, WhatTheFamilyCannotRunIsAnErrorOnItsKey) {
  const auto with = codestral_with;
  const auto file_error = [&](const std::string& text) -> std::string {
    try {
      spec::hf_config_import_file(write_config(text), {});
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(file_error(with("\"head_dim\": 64", "\"head_dim\": 32")).find("num_heads: num_heads x head_dim (128 x 32)"),
            std::string::npos)
      << file_error(with("\"head_dim\": 64", "\"head_dim\": 32"));
  const std::string limit = file_error(with("[0.0, Infinity]", "[0.0, -Infinity]"));
  EXPECT_NE(limit.find("time_step_limit: found [0.0,\"-Infinity\"]"), std::string::npos) << limit;
  const std::string three = file_error(with("[0.0, Infinity]", "[0.0, 0.1, 0.2]"));
  EXPECT_NE(three.find("time_step_limit"), std::string::npos) << three;
  // An Infinity where a number is needed names the key.
  const std::string eps = file_error(with("\"layer_norm_epsilon\": 1e-05", "\"layer_norm_epsilon\": NaN"));
  EXPECT_NE(eps.find("layer_norm_epsilon"), std::string::npos) << eps;
  EXPECT_NE(eps.find("NaN"), std::string::npos) << eps;
  // Inside a string, the words stay as they are.
  const spec::HfImport imp = spec::hf_config_import_file(
      write_config(with("\"mistralai/Mamba-Codestral-7B-v0.1\"", "\"org/Infinity-NaN\"")), {});
  EXPECT_EQ(imp.arch.hf_id, "org/Infinity-NaN");
}

}  // namespace
}  // namespace fk::testing
