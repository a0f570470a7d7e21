// fk import-hf for model_type mamba (MambaConfig): the HF keys become the mamba
// family's spec (intermediate_size from expand, time_step_rank "auto"), the keys of the
// original mamba_ssm configs are accepted when they agree, and what the family cannot
// run is an error naming the key.
#include "core/error.h"
#include "core/spec/families/mamba.h"
#include "core/spec/hf_config.h"

#include <gtest/gtest.h>

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

std::string import_error(const Json& config) {
  try {
    spec::hf_config_import(config, "m/config.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

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

}  // namespace
}  // namespace fk::testing
