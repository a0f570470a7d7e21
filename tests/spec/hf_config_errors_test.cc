// fk import-hf refuses what the spec cannot express, with "<file>: <field>: found
// <value>, expected <what>": unsupported model types, rope types, unknown keys, bad
// sizes, malformed JSON. Each case edits a valid 5.17 fixture.
#include "core/error.h"
#include "core/fs_util.h"
#include "core/spec/hf_config.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fk::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Json fixture(const std::string& model_type) {
  return Json::parse(fs_read_file(std::string(FK_SOURCE_DIR) + "/tests/fixtures/hf/" + model_type + "/config.json"));
}

// The message of the import's error ("" if it succeeded).
std::string import_error(const Json& config, const spec::HfImportOptions& o = {}) {
  try {
    spec::hf_config_import(config, "m/config.json", o);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

#define EXPECT_IMPORT_ERROR(config, prefix, needle)                                  \
  do {                                                                               \
    const std::string msg_ = import_error(config);                                   \
    EXPECT_EQ(msg_.rfind(std::string("m/config.json: ") + (prefix), 0), 0u) << msg_; \
    EXPECT_NE(msg_.find(needle), std::string::npos) << msg_;                         \
  } while (0)

TEST(HfImportErrors, UnsupportedModelType) {
  Json c = fixture("llama");
  c["model_type"] = "my_own_model";
  EXPECT_IMPORT_ERROR(c, "model_type: found \"my_own_model\", expected one of [", "qwen3_moe");
  // A known model type that cannot be imported says what it needs.
  c["model_type"] = "bloom";
  EXPECT_IMPORT_ERROR(c, "model_type: \"bloom\" cannot be imported: ", "ALiBi");
  c["model_type"] = "zamba2";
  EXPECT_IMPORT_ERROR(c, "model_type: \"zamba2\" cannot be imported: ", "jamba, bamba and granitemoehybrid import");
  c.erase("model_type");
  EXPECT_IMPORT_ERROR(c, "model_type: missing", "llama");
}

TEST(HfImportErrors, UnknownRopeTypes) {
  Json c = fixture("llama");
  c["rope_parameters"]["rope_type"] = "longrope";
  EXPECT_IMPORT_ERROR(c, "rope_parameters.rope_type: found \"longrope\"",
                      "expected \"default\", \"linear\", \"llama3\" or \"yarn\"");
  // 4.x form
  Json old = fixture("llama");
  old.erase("rope_parameters");
  old["rope_theta"] = 10000.0;
  old["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  EXPECT_IMPORT_ERROR(old, "rope_scaling.rope_type: found \"dynamic\"", "llama3");
  // A key the rope type does not have.
  Json extra = fixture("llama");
  extra["rope_parameters"]["beta_fast"] = 32;
  EXPECT_IMPORT_ERROR(extra, "rope_parameters.beta_fast: found 32", "no such key with rope_type \"llama3\"");
  // llama3 without its factors
  Json partial = fixture("llama");
  partial["rope_parameters"].erase("low_freq_factor");
  EXPECT_IMPORT_ERROR(partial, "rope_parameters.low_freq_factor: missing", "required");
  // yarn without its factor, with a llama3 key, with a truncate that is not a boolean,
  // with beta_fast not above beta_slow (the spec's validation, on the config's field).
  const auto yarn = [](Json extra_keys) {
    Json y = fixture("llama");
    y["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 10000.0}, {"factor", 4.0}};
    for (auto it = extra_keys.begin(); it != extra_keys.end(); ++it) y["rope_parameters"][it.key()] = it.value();
    return y;
  };
  Json no_factor = yarn(Json::object());
  no_factor["rope_parameters"].erase("factor");
  EXPECT_IMPORT_ERROR(no_factor, "rope_parameters.factor: missing", "required");
  EXPECT_IMPORT_ERROR(yarn({{"low_freq_factor", 1.0}}), "rope_parameters.low_freq_factor: found 1",
                      "no such key with rope_type \"yarn\"");
  EXPECT_IMPORT_ERROR(yarn({{"truncate", "yes"}}), "rope_parameters.truncate: found \"yes\"", "true or false");
  EXPECT_IMPORT_ERROR(yarn({{"beta_fast", 1.0}, {"beta_slow", 2.0}}), "position.rope_scaling.beta_fast: 1",
                      "greater than beta_slow (2)");
  EXPECT_IMPORT_ERROR(yarn({{"attention_factor", -1.0}}), "rope_parameters.attention_factor: found -1", "> 0");
  // Gemma 3: scaling on sliding layers cannot be expressed.
  Json g = fixture("gemma3_text");
  g["rope_parameters"]["sliding_attention"] = {{"rope_type", "linear"}, {"factor", 2.0}, {"rope_theta", 10000.0}};
  EXPECT_IMPORT_ERROR(g, "rope_parameters.sliding_attention.rope_type: found \"linear\"", "full-attention layers only");
}

TEST(HfImportErrors, MissingRequiredField) {
  Json c = fixture("qwen3");
  c.erase("hidden_size");
  EXPECT_IMPORT_ERROR(c, "hidden_size: missing", "required");
  Json g = fixture("gpt2");
  g.erase("n_layer");
  EXPECT_IMPORT_ERROR(g, "n_layer: missing", "required");
  Json m = fixture("mixtral");
  m.erase("num_local_experts");
  EXPECT_IMPORT_ERROR(m, "num_local_experts: missing", "required");
}

TEST(HfImportErrors, KvHeadsMustDivideHeads) {
  Json c = fixture("llama");
  c["num_key_value_heads"] = 3;
  EXPECT_IMPORT_ERROR(c, "num_key_value_heads: found 3", "expected a divisor of num_attention_heads (4)");
  c["num_key_value_heads"] = 8;
  EXPECT_IMPORT_ERROR(c, "num_key_value_heads: found 8", "divisor");
  Json g = fixture("gpt2");
  g["n_head"] = 5;
  EXPECT_IMPORT_ERROR(g, "n_head: found 5", "expected a divisor of n_embd (32)");
}

TEST(HfImportErrors, WrongTypes) {
  Json c = fixture("llama");
  c["hidden_size"] = "32";
  EXPECT_IMPORT_ERROR(c, "hidden_size: found \"32\"", "expected an integer");
  c = fixture("llama");
  c["rms_norm_eps"] = nullptr;
  EXPECT_IMPORT_ERROR(c, "rms_norm_eps: found null", "a number");
  c = fixture("llama");
  c["dtype"] = "float8_e4m3fn";
  EXPECT_IMPORT_ERROR(c, "dtype: found \"float8_e4m3fn\"", "\"bfloat16\"");
  c = fixture("llama");
  c["torch_dtype"] = "bfloat16";  // 4.x key disagreeing with the 5.x one
  EXPECT_IMPORT_ERROR(c, "dtype: found \"float32\"", "the same dtype as torch_dtype (bf16)");
}

TEST(HfImportErrors, UnknownKeysThatMayChangeTheMath) {
  Json c = fixture("llama");
  c["logit_scale"] = 0.5;
  EXPECT_IMPORT_ERROR(c, "logit_scale: found 0.5", "LlamaConfig");
  c = fixture("llama");
  c["quantization_config"] = {{"quant_method", "fp8"}};
  EXPECT_IMPORT_ERROR(c, "quantization_config: found {", "quantized checkpoints are not supported");
  c = fixture("mistral");
  c["attention_bias"] = true;
  EXPECT_IMPORT_ERROR(c, "attention_bias: found true", "MistralConfig projections have no bias");
  c["attention_bias"] = false;  // inert: accepted
  EXPECT_EQ(import_error(c), "");
}

TEST(HfImportErrors, ValuesTheModelCannotHave) {
  Json c = fixture("llama");
  c["rope_parameters"]["partial_rotary_factor"] = 0.5;
  EXPECT_IMPORT_ERROR(c, "partial_rotary_factor: found 0.5", "LlamaConfig rotates the whole head");
  Json p = fixture("phi3");
  p["rope_parameters"]["partial_rotary_factor"] = 0.5;
  EXPECT_EQ(import_error(p), "") << "Phi-3 honours partial rotary";
  EXPECT_DOUBLE_EQ(spec::hf_config_import(p, "m/config.json").arch.position.partial_rotary_factor, 0.5);
  Json q = fixture("qwen3_moe");
  q["use_sliding_window"] = true;
  EXPECT_IMPORT_ERROR(q, "use_sliding_window: found true", "expected false");
  q = fixture("qwen3_moe");
  q["mlp_only_layers"] = {0, 7};
  EXPECT_IMPORT_ERROR(q, "mlp_only_layers[1]: found 7", "[0, 3)");
  q["mlp_only_layers"] = {0, 1, 2};
  EXPECT_IMPORT_ERROR(q, "mlp_only_layers: leaves no MoE layer", "sparse");
  q = fixture("qwen3_moe");
  q["mlp_only_layers"] = Json::array();
  q["decoder_sparse_step"] = 2;
  EXPECT_EQ(spec::hf_config_import(q, "m/config.json").arch.moe.dense_layers, (std::vector<int64_t>{0, 2}));
  Json q3 = fixture("qwen3");
  q3["layer_types"][1] = "sliding_attention";
  EXPECT_IMPORT_ERROR(q3, "use_sliding_window: found false", "layer_types lists sliding_attention layers");
  q3["use_sliding_window"] = true;
  q3["sliding_window"] = 4;
  EXPECT_EQ(spec::hf_config_import(q3, "m/config.json").arch.attention.layer_types,
            (std::vector<spec::LayerType>{spec::LayerType::kFull, spec::LayerType::kSliding}));
  Json g = fixture("gemma2");
  g["layer_types"] = {"sliding_attention", "full_attention"};
  EXPECT_IMPORT_ERROR(g, "layer_types: found 2 entries", "num_hidden_layers = 4");
  g = fixture("gemma2");
  g["layer_types"][1] = "chunked_attention";
  EXPECT_IMPORT_ERROR(g, "layer_types[1]: found \"chunked_attention\"", "\"sliding_attention\"");
  g = fixture("gemma2");
  g["sliding_window"] = nullptr;
  EXPECT_IMPORT_ERROR(g, "sliding_window: found null", "window size");
  g = fixture("gemma2");
  g["use_bidirectional_attention"] = true;
  EXPECT_IMPORT_ERROR(g, "use_bidirectional_attention: found true", "causal");
  Json b = fixture("bert");
  b["position_embedding_type"] = "relative_key";
  EXPECT_IMPORT_ERROR(b, "position_embedding_type: found \"relative_key\"", "\"absolute\"");
  b = fixture("bert");
  b["is_decoder"] = true;
  EXPECT_IMPORT_ERROR(b, "is_decoder: found true", "expected false");
  b = fixture("bert");
  b["hidden_act"] = "quick_gelu";
  EXPECT_IMPORT_ERROR(b, "hidden_act: found \"quick_gelu\"", "gelu_pytorch_tanh");
  Json t = fixture("gpt2");
  t["scale_attn_weights"] = false;
  EXPECT_IMPORT_ERROR(t, "scale_attn_weights: found false", "expected true");
  Json l = fixture("llama");
  l["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
  EXPECT_IMPORT_ERROR(l, "rope_scaling: found {", "null when rope_parameters is given");
}

// Values the spec cannot hold used to end in "unexpected error" (a 10^12-layer vector)
// or in fk import-hf's "internal error" (the written spec failed to load). Each is
// now an error on the config's key, within the spec's limit (core/spec/limits.h).
TEST(HfImportErrors, ValuesOutsideTheSpecLimits) {
  Json c = fixture("llama");
  c["num_hidden_layers"] = 1e12;
  EXPECT_IMPORT_ERROR(c, "num_hidden_layers: found 1000000000000.0", "expected an integer in [1, 100000]");
  c["num_hidden_layers"] = int64_t{1} << 40;
  EXPECT_IMPORT_ERROR(c, "num_hidden_layers: found 1099511627776", "[1, 100000]");
  c = fixture("llama");
  c["rms_norm_eps"] = 0;
  EXPECT_IMPORT_ERROR(c, "rms_norm_eps: found 0", "expected a number in (0, 0.1]");
  c["rms_norm_eps"] = -1e-6;
  EXPECT_IMPORT_ERROR(c, "rms_norm_eps: found -1e-06", "(0, 0.1]");
  Json g = fixture("gpt2");
  g["n_layer"] = 1e12;
  EXPECT_IMPORT_ERROR(g, "n_layer: found", "[1, 100000]");
  g = fixture("gpt2");
  g["layer_norm_epsilon"] = 0.0;
  EXPECT_IMPORT_ERROR(g, "layer_norm_epsilon: found 0.0", "(0, 0.1]");
  Json b = fixture("bert");
  b["layer_norm_eps"] = 0;
  EXPECT_IMPORT_ERROR(b, "layer_norm_eps: found 0", "(0, 0.1]");
  c = fixture("llama");
  c["hidden_size"] = int64_t{1} << 30;
  EXPECT_IMPORT_ERROR(c, "hidden_size: found 1073741824", "[1, 16777216]");
  c = fixture("llama");
  c["max_position_embeddings"] = int64_t{1} << 40;
  EXPECT_IMPORT_ERROR(c, "max_position_embeddings: found 1099511627776", "[1, 1073741824]");
  // A limit the reader does not check key by key still ends in the final validation,
  // naming the spec's field, never in a spec that fails to load.
  c = fixture("llama");
  c["rope_parameters"]["factor"] = 1e7;
  EXPECT_IMPORT_ERROR(c, "position.rope_scaling.factor: 10000000 is out of range", "imported from this config");
}

TEST(HfImportErrors, NumbersNoDoubleHoldsNameFileLineAndField) {
  TempSpecs tmp;
  std::string text = fs_read_file(std::string(FK_SOURCE_DIR) + "/tests/fixtures/hf/llama/config.json");
  const auto at = text.find("\"rms_norm_eps\": ");
  ASSERT_NE(at, std::string::npos);
  const auto end = text.find_first_of(",\n}", at + 16);
  text.replace(at, end - at, "\"rms_norm_eps\": 1e400");
  const std::string path = tmp.write("huge/config.json", text);
  int line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  try {
    spec::hf_config_import_file(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_EQ(msg.rfind(fmt::format("{}:{}:", path, line), 0), 0u) << msg;
    EXPECT_NE(msg.find(": rms_norm_eps: found 1e400, expected a number a double can hold"), std::string::npos) << msg;
  }
  // Nested: the path names the key inside rope_parameters.
  const std::string body = R"({"model_type": "llama", "rope_parameters": {"factor": -1e999}})";
  const std::string nested = tmp.write("nested/config.json", body);
  try {
    spec::hf_config_import_file(nested);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string want = fmt::format("{}:1:{}: rope_parameters.factor: found -1e999", nested, body.find("-1e999") + 1);
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(HfImportErrors, Gemma3WrapperNeedsTextConfig) {
  Json c = {{"model_type", "gemma3"}, {"vision_config", Json::object()}};
  EXPECT_IMPORT_ERROR(c, "text_config: found nothing", "expected the text model's config");
  Json w = {{"model_type", "gemma3"}, {"text_config", fixture("gemma3_text")}};
  w["text_config"]["num_key_value_heads"] = 3;
  EXPECT_IMPORT_ERROR(w, "text_config.num_key_value_heads: found 3", "divisor");
  w["text_config"]["num_key_value_heads"] = 2;
  w["image_scale"] = 2;
  EXPECT_IMPORT_ERROR(w, "image_scale: found 2", "does not know");
}

TEST(HfImportErrors, BadName) {
  spec::HfImportOptions o;
  o.name = "my model";
  const std::string msg = import_error(fixture("llama"), o);
  EXPECT_EQ(msg.rfind("m/config.json: --name: found 'my model'", 0), 0u) << msg;
}

TEST(HfImportErrors, MalformedJsonNamesFileLineAndColumn) {
  TempSpecs tmp;
  const std::string path =
      tmp.write("bad/config.json", "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 32,,\n}\n");
  try {
    spec::hf_config_import_file(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path + ":3:21: not valid JSON: syntax error", 0), 0u) << msg;
  }
  try {
    spec::hf_config_import_file(tmp.root() + "/missing/config.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing/config.json: cannot open"), std::string::npos) << e.what();
  }
  const std::string list = tmp.write("list/config.json", "[1, 2]");
  try {
    spec::hf_config_import_file(list);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), list + ": (top level): found [1,2], expected a JSON object");
  }
}

}  // namespace
}  // namespace fk::testing
