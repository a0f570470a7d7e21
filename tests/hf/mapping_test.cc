// The checkpoint mapping against HF's own outputs, in process (tp1): the shipped map
// of every fixture matches HF, and deliberately wrong maps (gate/up swapped, k/v
// swapped, a fused offset wrong, GPT-2's Conv1D not transposed, BERT's norms swapped)
// fail parity, so the parity tests would catch them. Bad checkpoints give errors that
// name the tensor. The architectures come from the specs `fk import-hf` wrote for the
// tp1 parity tests (FK_PARITY_DIR; ctest runs those first).
#include "core/error.h"
#include "core/safetensors.h"
#include "core/spec/family.h"
#include "core/spec/spec_file.h"
#include "kernels/backends.h"
#include "kernels/op.h"
#include "runner/model/checkpoint_weights.h"
#include "runner/model/family.h"
#include "runner/model/transformer/checkpoint_names.h"
#include "runner/model/transformer/transformer.h"
#include "runner/runtime.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace fk::runner {
namespace {

namespace fs = std::filesystem;

struct Fixture {
  spec::Architecture arch;
  std::string dir;
  std::string checkpoint() const { return dir + "/model.safetensors"; }
};

Fixture fixture(const std::string& model_type) {
  const char* parity = std::getenv("FK_PARITY_DIR");
  if (parity == nullptr) throw std::runtime_error("FK_PARITY_DIR is not set (ctest sets it)");
  const std::string spec = std::string(parity) + "/" + model_type + "-tp1/spec.yaml";
  spec::Diagnostics diags;
  const auto doc = spec::architecture_load_file(spec, diags);
  if (!doc) throw std::runtime_error(spec + ": " + diags.to_string());
  return {doc->full, std::string(FK_SOURCE_DIR) + "/tests/fixtures/hf/" + model_type};
}

// Relative L2 error of our fp32 output (logits, last_hidden_state or a backbone's
// pooler_output) against HF's, through the architecture's family.
double output_error(const Fixture& f, const WeightSource& source) {
  kernels::register_builtin_ops();
  const SafetensorsFile inputs(f.dir + "/inputs.safetensors"), expected(f.dir + "/expected.safetensors");
  // A vision encoder's inputs are images; its sequence is their tokens.
  const bool images = inputs.has("pixel_values");
  const Tensor ids = images ? inputs.read("pixel_values", DType::kF32) : inputs.read("input_ids", DType::kI64);
  spec::Workload w;
  w.name = "parity";
  w.batch = ids.size(0);
  w.seq_len = images ? 1 : ids.size(1);
  w.dtype = DType::kF32;
  w = spec::family_workload(f.arch, w);
  const Placement pl;
  const ModelFamily& family = model_family_of(f.arch);
  const std::unique_ptr<Weights> weights = family.master_weights(f.arch, pl, source);
  const auto backend = kernels::backend_create(DeviceKind::kCpu, 0);
  Runtime rt(ImplSet::baseline(DeviceKind::kCpu), *backend);
  const std::unique_ptr<Model> model = build_model({f.arch, w, pl, ModelComms{}, *weights, rt});
  model->set_all_logits(true);
  const Tensor out = model->step(ids, w.seq_len, 0);
  const std::string name = expected.has("logits")          ? "logits"
                           : expected.has("pooler_output") ? "pooler_output"
                                                           : "last_hidden_state";
  const Tensor hf = expected.read(name, DType::kF32);
  EXPECT_EQ(out.numel(), hf.numel());
  double num = 0, den = 0;
  for (int64_t i = 0; i < std::min(out.numel(), hf.numel()); ++i) {
    const double d = static_cast<double>(out.data_as<float>()[i]) - hf.data_as<float>()[i];
    num += d * d;
    den += static_cast<double>(hf.data_as<float>()[i]) * hf.data_as<float>()[i];
  }
  return std::sqrt(num / den);
}

// The shipped map of `model_type` with `edit` applied to every location it gives.
TensorMap edited(const std::string& model_type, std::function<void(const std::string&, TensorRef&)> edit) {
  TensorMap m = hf_tensor_map(model_type);
  m.locate = [base = m.locate, edit](const std::string& canonical, const spec::Architecture& a) {
    TensorRef r = base(canonical, a);
    edit(canonical, r);
    return r;
  };
  return m;
}

void swap_in_name(std::string& name, const std::string& x, const std::string& y) {
  if (const auto p = name.find(x); p != std::string::npos) {
    name.replace(p, x.size(), y);
  } else if (const auto q = name.find(y); q != std::string::npos) {
    name.replace(q, y.size(), x);
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class EveryFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryFixture, ShippedMapMatchesHf) {
  const Fixture f = fixture(GetParam());
  const CheckpointWeights source(f.checkpoint(), f.arch, model_family_of(f.arch).checkpoint_names(f.arch));
  EXPECT_LT(output_error(f, source), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Hf, EveryFixture,
                         ::testing::Values("llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "mixtral", "gemma",
                                           "gemma2", "gemma3_text", "phi3", "bert", "gpt2", "starcoder2", "opt",
                                           "gpt_neox", "phi", "gptj", "granite", "cohere", "qwen2_moe", "olmo2",
                                           "stablelm", "gpt_bigcode", "olmo", "olmoe", "helium", "seed_oss", "glm",
                                           "glm4", "granitemoe", "granitemoeshared", "gpt_oss", "falcon", "gpt_neo",
                                           "biogpt", "roberta", "xlm-roberta", "camembert", "electra", "distilbert",
                                           "arcee", "nemotron", "smollm3", "cohere2", "persimmon", "qwen3-yarn",
                                           "llama-yarn", "phi-qk", "cohere-qk", "stablelm-qk", "deepseek_v3",
                                           "deepseek_v3-yarn", "vit", "dinov2", "siglip_vision_model", "convnext",
                                           "convnextv2", "modernbert"));

// Falcon's grouped query_key_value at its two ends: one kv group per head is GPT-NeoX's
// per-head interleave, one group for all heads is q rows, then k, then v. Row r of a
// canonical tensor is fused row (r / group) * stride + offset + r % group.
TEST(GroupedQkv, EndsAreThePerHeadAndContiguousLayouts) {
  spec::Architecture a;
  a.num_attention_heads = 4;
  a.head_dim = 8;
  const auto fused_row = [](const TensorRef& ref, int64_t r) {
    return ref.group == 0 ? ref.offset + r : (r / ref.group) * ref.stride + ref.offset + r % ref.group;
  };
  const char* names[] = {"model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight",
                         "model.layers.0.self_attn.v_proj.weight"};
  a.num_key_value_heads = 4;
  for (int part = 0; part < 3; ++part) {
    const TensorRef f = hf_tensor_map("falcon").locate(names[part], a);
    const TensorRef n = hf_tensor_map("gpt_neox").locate(names[part], a);
    EXPECT_EQ(f.total, n.total);
    for (int64_t r = 0; r < 32; ++r) ASSERT_EQ(fused_row(f, r), fused_row(n, r)) << part << " row " << r;
  }
  a.num_key_value_heads = 1;
  const int64_t begin[] = {0, 32, 40}, rows[] = {32, 8, 8};
  for (int part = 0; part < 3; ++part) {
    const TensorRef f = hf_tensor_map("falcon").locate(names[part], a);
    EXPECT_EQ(f.total, 48);
    for (int64_t r = 0; r < rows[part]; ++r) ASSERT_EQ(fused_row(f, r), begin[part] + r) << part << " row " << r;
  }
  a.num_key_value_heads = 2;  // two groups of [q, q, k, v]
  const TensorRef k = hf_tensor_map("falcon").locate(names[1], a);
  EXPECT_EQ(fused_row(k, 0), 16);
  EXPECT_EQ(fused_row(k, 8), 48);
  const TensorRef q = hf_tensor_map("falcon").locate(names[0], a);
  EXPECT_EQ(fused_row(q, 15), 15);
  EXPECT_EQ(fused_row(q, 16), 32);
}

TEST(WrongMapping, SwappedGateAndUpFailsParity) {
  for (const std::string mt : {"llama", "gemma2", "qwen3_moe"}) {
    const Fixture f = fixture(mt);
    const CheckpointWeights bad(f.checkpoint(), f.arch,
                                edited(mt, [](const std::string&, TensorRef& r) { swap_in_name(r.name, "gate_proj", "up_proj"); }));
    EXPECT_GT(output_error(f, bad), 1e-2) << mt;
  }
}

TEST(WrongMapping, SwappedKeyAndValueFailsParity) {
  const Fixture f = fixture("mistral");
  const CheckpointWeights bad(f.checkpoint(), f.arch,
                              edited("mistral", [](const std::string&, TensorRef& r) { swap_in_name(r.name, "k_proj", "v_proj"); }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, Phi3FusedGateUpHalvesSwappedFailsParity) {
  const Fixture f = fixture("phi3");
  const int64_t inter = f.arch.intermediate_size;
  const CheckpointWeights bad(f.checkpoint(), f.arch, edited("phi3", [inter](const std::string&, TensorRef& r) {
                                if (r.name.find("gate_up_proj") != std::string::npos) r.offset = inter - r.offset;
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, Gpt2ConvWeightsReadUntransposedFailParity) {
  const Fixture f = fixture("gpt2");
  // c_proj of the attention is square, so reading it untransposed is no shape error:
  // only the numbers show it.
  const CheckpointWeights bad(f.checkpoint(), f.arch, edited("gpt2", [](const std::string&, TensorRef& r) {
                                if (r.name.find("attn.c_proj.weight") != std::string::npos) r.transpose = false;
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, GptNeoxFusedQkvReadAsContiguousBlocksFailsParity) {
  // query_key_value interleaves q, k and v per head; reading it as q rows, then k, then
  // v (Phi-3's layout) has the right shape and the wrong numbers.
  const Fixture f = fixture("gpt_neox");
  const CheckpointWeights bad(f.checkpoint(), f.arch, edited("gpt_neox", [](const std::string&, TensorRef& r) {
                                if (r.group == 0) return;
                                r.offset = r.offset / r.group * (r.total / 3);
                                r.group = 0;
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, GptBigCodeMultiQueryKeyAndValueRowsSwappedFailParity) {
  // Under multi-query, c_attn holds q rows, then the one k head's, then the v head's;
  // reading v where k is has the right shape and the wrong numbers.
  const Fixture f = fixture("gpt_bigcode");
  ASSERT_EQ(f.arch.num_key_value_heads, 1);
  const int64_t q = f.arch.num_attention_heads * f.arch.head_dim, kv = f.arch.head_dim;
  const CheckpointWeights bad(f.checkpoint(), f.arch, edited("gpt_bigcode", [q, kv](const std::string&, TensorRef& r) {
                                if (r.name.find("c_attn") == std::string::npos || r.offset < q) return;
                                r.offset = r.offset == q ? q + kv : q;
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, FalconGroupedQkvReadAsContiguousBlocksFailsParity) {
  // query_key_value groups each kv head's q heads with its k and v; reading q rows, then
  // k, then v (Phi-3's layout) has the right shape and the wrong numbers.
  const Fixture f = fixture("falcon");
  ASSERT_GT(f.arch.num_key_value_heads, 1);
  ASSERT_LT(f.arch.num_key_value_heads, f.arch.num_attention_heads);
  const int64_t d = f.arch.head_dim, q = f.arch.num_attention_heads * d, kv = f.arch.num_key_value_heads * d;
  const CheckpointWeights bad(f.checkpoint(), f.arch, edited("falcon", [&](const std::string&, TensorRef& r) {
                                if (r.group == 0) return;
                                r.offset = r.group > d ? 0 : r.offset < r.stride - d ? q : q + kv;
                                r.group = 0;
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, GraniteMoeExpertHalvesSwappedFailParity) {
  // input_linear holds each expert's gate rows, then its up rows.
  const Fixture f = fixture("granitemoe");
  const int64_t im = f.arch.moe.moe_intermediate_size;
  const CheckpointWeights bad(f.checkpoint(), f.arch,
                              edited("granitemoe", [im](const std::string& canonical, TensorRef& r) {
                                if (r.stack == 0 || canonical.find("down_proj") != std::string::npos) return;
                                r.offset += canonical.find("gate_proj") != std::string::npos ? im : -im;
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, GptOssGateUpAsHalvesFailsParity) {
  // gate_up_proj interleaves each expert's gate and up columns; read as gate half, then up
  // half (GraniteMoe's layout), the experts compute something else.
  const Fixture f = fixture("gpt_oss");
  const int64_t im = f.arch.moe.moe_intermediate_size;
  const CheckpointWeights bad(f.checkpoint(), f.arch, edited("gpt_oss", [im](const std::string&, TensorRef& r) {
                                if (r.group == 0) return;
                                const int64_t part = r.offset % 2;
                                r.offset = r.offset - part + part * im;
                                r.group = 0;
                                r.stride = 0;
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, RobertaPositionsFromRowZeroFailParity) {
  const Fixture f = fixture("roberta");
  const CheckpointWeights bad(f.checkpoint(), f.arch, edited("roberta", [](const std::string& canonical, TensorRef& r) {
                                if (canonical == "model.embed_positions.weight") r.offset = 0;
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, OptPositionsWithoutTheirOffsetFailParity) {
  const Fixture f = fixture("opt");
  const CheckpointWeights bad(f.checkpoint(), f.arch, edited("opt", [](const std::string& canonical, TensorRef& r) {
                                if (canonical == "model.embed_positions.weight") r.offset = 0;
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(WrongMapping, PhiWithoutItsLmHeadBiasOrAsASequentialLayerFailsParity) {
  Fixture f = fixture("phi");
  const CheckpointWeights source(f.checkpoint(), f.arch, hf_tensor_map("phi"));
  f.arch.head.bias = false;
  EXPECT_GT(output_error(f, source), 1e-3) << "the LM head's bias";
  f.arch.head.bias = true;
  f.arch.norm.placement = spec::NormPlacement::kParallel;  // a second norm Phi does not have
  EXPECT_NE(error_of([&] { (void)output_error(f, source); }).find("post_attention_layernorm"), std::string::npos);
}

TEST(WrongMapping, BertPostNormsSwappedFailParity) {
  const Fixture f = fixture("bert");
  const CheckpointWeights bad(f.checkpoint(), f.arch, edited("bert", [](const std::string&, TensorRef& r) {
                                swap_in_name(r.name, "attention.output.LayerNorm", "output.LayerNorm");
                              }));
  EXPECT_GT(output_error(f, bad), 1e-2);
}

TEST(CheckpointErrors, MissingTensorNamesWhatWasAskedAndWhereItLooked) {
  Fixture f = fixture("mixtral");
  const CheckpointWeights source(f.checkpoint(), f.arch, hf_tensor_map("llama"));  // Llama names: no experts
  const std::string e = error_of([&] { (void)ModelWeights::build(f.arch, Placement{}, source); });
  EXPECT_NE(e.find("no tensor for model.layers.0.mlp.gate.weight"), std::string::npos) << e;  // the router, asked first
  EXPECT_NE(e.find("looked for"), std::string::npos) << e;
  EXPECT_NE(e.find(f.checkpoint()), std::string::npos) << e;
}

TEST(CheckpointErrors, WrongShapeNamesTheTensorAndTheShapeExpected) {
  Fixture f = fixture("llama");
  f.arch.intermediate_size = 48;  // the checkpoint's MLP is 64 wide
  const CheckpointWeights source(f.checkpoint(), f.arch, model_family_of(f.arch).checkpoint_names(f.arch));
  const std::string e = error_of([&] { (void)ModelWeights::build(f.arch, Placement{}, source); });
  EXPECT_NE(e.find("'model.layers.0.mlp.gate_proj.weight'"), std::string::npos) << e;
  EXPECT_NE(e.find("is [64, 32] F32"), std::string::npos) << e;
  EXPECT_NE(e.find("needs [48, 32]"), std::string::npos) << e;
}

TEST(CheckpointErrors, IntegerTensorWhereAWeightBelongsIsAnError) {
  const fs::path dir = fs::temp_directory_path() / ("fk_hf_int_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Fixture f = fixture("llama");
  // The fixture's checkpoint with one weight replaced by an int32 tensor of its shape.
  const SafetensorsFile src(f.checkpoint());
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const auto& n : src.names()) {
    const SafetensorsEntry& e = src.entry(n);
    tensors.emplace_back(n, n == "model.norm.weight" ? Tensor::zeros(DType::kI32, e.shape) : src.read(n, e.dtype));
  }
  safetensors_write((dir / "model.safetensors").string(), tensors);
  const CheckpointWeights source(dir.string(), f.arch, model_family_of(f.arch).checkpoint_names(f.arch));
  const std::string e = error_of([&] { (void)ModelWeights::build(f.arch, Placement{}, source); });
  EXPECT_NE(e.find("'model.norm.weight'"), std::string::npos) << e;
  EXPECT_NE(e.find("I32"), std::string::npos) << e;
  fs::remove_all(dir);
}

// gpt-oss stores its experts stacked and [experts, in, out]: gate_up_proj [E, H, 2 I] with
// gate j in column 2 j and up j in 2 j + 1, down_proj [E, I, H], and per-expert biases
// [E, n]. A rank's block of one expert (rows of a transposed, interleaved matrix; columns
// sliced too) is read from the right elements, and a tensor of another shape is named.
TEST(StackedTensors, GptOssExpertsAreReadTransposedAndDeinterleaved) {
  const fs::path dir = fs::temp_directory_path() / ("fk_hf_stacked_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const int64_t e = 3, h = 5, im = 4;
  // Each element's value encodes its index: expert x, in i, out o -> 1000 x + 10 i + o.
  const auto coded = [](std::vector<int64_t> shape) {
    Tensor t = Tensor::empty(DType::kF32, shape);
    const int64_t inner = shape.back(), mid = shape.size() == 3 ? shape[1] : 1;
    for (int64_t k = 0; k < t.numel(); ++k)
      t.data_as<float>()[k] = static_cast<float>(1000 * (k / (inner * mid)) + 10 * ((k / inner) % mid) + k % inner);
    return t;
  };
  safetensors_write((dir / "model.safetensors").string(),
                    {{"model.layers.2.mlp.experts.gate_up_proj", coded({e, h, 2 * im})},
                     {"model.layers.2.mlp.experts.gate_up_proj_bias", coded({e, 2 * im})},
                     {"model.layers.2.mlp.experts.down_proj", coded({e, im, h})},
                     {"model.layers.2.mlp.experts.down_proj_bias", coded({e, h})}});
  spec::Architecture a;
  a.model_type = "gpt_oss";
  a.hidden_size = h;
  a.moe.num_experts = e;
  a.moe.moe_intermediate_size = im;
  const CheckpointWeights source(dir.string(), a, hf_tensor_map("gpt_oss"));
  const auto at = [](const Tensor& t, int64_t i) { return t.data_as<float>()[i]; };
  // Expert 1's up rows 1..2 (of I = 4) over hidden columns 2..4: up j of in c is column 2 j + 1.
  const Tensor up = source.block("model.layers.2.mlp.experts.1.up_proj.weight", im, h, 1, 2, 2, 3, 0, 0);
  ASSERT_EQ(up.shape(), (Shape{2, 3}));
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(at(up, r * 3 + c), 1000 + 10 * (2 + c) + 2 * (1 + r) + 1) << r << c;
  const Tensor gate = source.block("model.layers.2.mlp.experts.2.gate_proj.weight", im, h, 0, 4, 0, 5, 0, 0);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 5; ++c) EXPECT_EQ(at(gate, r * 5 + c), 2000 + 10 * c + 2 * r);
  // down_proj of expert 0: canonical [H, I] row q, column j is stored [j][q]; columns 2..3.
  const Tensor down = source.block("model.layers.2.mlp.experts.0.down_proj.weight", h, im, 0, 5, 2, 2, 0, 0);
  for (int64_t q = 0; q < 5; ++q)
    for (int64_t j = 0; j < 2; ++j) EXPECT_EQ(at(down, q * 2 + j), 10 * (2 + j) + q);
  // Biases: expert 2's gate elements 1..3 are columns 2, 4, 6; its down bias is row 2.
  const Tensor gb = source.block("model.layers.2.mlp.experts.2.gate_proj.bias", 1, im, 0, 1, 1, 3, 0, 0);
  for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(at(gb, j), 2000 + 2 * (1 + j));
  const Tensor ub = source.block("model.layers.2.mlp.experts.0.up_proj.bias", 1, im, 0, 1, 0, 4, 0, 0);
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(at(ub, j), 2 * j + 1);
  const Tensor db = source.block("model.layers.2.mlp.experts.2.down_proj.bias", 1, h, 0, 1, 0, 5, 0, 0);
  for (int64_t q = 0; q < 5; ++q) EXPECT_EQ(at(db, q), 2000 + q);
  // An architecture whose experts are wider than the file's: the tensor and both shapes named.
  a.moe.moe_intermediate_size = 6;
  const CheckpointWeights wide(dir.string(), a, hf_tensor_map("gpt_oss"));
  const std::string err =
      error_of([&] { (void)wide.block("model.layers.2.mlp.experts.0.gate_proj.weight", 6, h, 0, 6, 0, h, 0, 0); });
  EXPECT_NE(err.find("'model.layers.2.mlp.experts.gate_up_proj'"), std::string::npos) << err;
  EXPECT_NE(err.find("is [3, 5, 8]"), std::string::npos) << err;
  EXPECT_NE(err.find("needs [3, 5, 12]"), std::string::npos) << err;
  fs::remove_all(dir);
}

// StableLM's qk_layernorm keeps one tensor a head (q_layernorm.norms.<h>.weight): the
// rows a rank asks for are read from their heads' tensors, and a head whose tensor is
// missing or of the wrong shape is named.
TEST(PerRowTensors, StableLmPerHeadNormsAreReadAsRowsAndABadHeadIsNamed) {
  const fs::path dir = fs::temp_directory_path() / ("fk_hf_rows_" + std::to_string(::getpid()));
  const auto write = [&](int heads, int64_t bad_len) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (int h = 0; h < heads; ++h) {
      Tensor t = Tensor::empty(DType::kF32, {h == 1 && bad_len > 0 ? bad_len : 8});
      for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = static_cast<float>(10 * h + i);
      tensors.emplace_back(fmt::format("model.layers.3.self_attn.q_layernorm.norms.{}.weight", h), t);
    }
    safetensors_write((dir / "model.safetensors").string(), tensors);
  };
  spec::Architecture a;
  a.model_type = "stablelm";
  const std::string name = "model.layers.3.self_attn.q_norm.weight";
  write(4, 0);
  {
    const CheckpointWeights source(dir.string(), a, hf_tensor_map("stablelm"));
    const Tensor rows = source.block(name, 4, 8, 1, 2, 0, 8, 0, 0);  // heads 1 and 2
    ASSERT_EQ(rows.numel(), 16);
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 8; ++i) EXPECT_EQ(rows.data_as<float>()[r * 8 + i], static_cast<float>(10 * (r + 1) + i));
  }
  write(3, 0);  // no head 3
  {
    const CheckpointWeights source(dir.string(), a, hf_tensor_map("stablelm"));
    const std::string e = error_of([&] { (void)source.block(name, 4, 8, 2, 2, 0, 8, 0, 0); });
    EXPECT_NE(e.find("q_layernorm.norms.3.weight"), std::string::npos) << e;
  }
  write(4, 7);  // head 1 is [7]
  {
    const CheckpointWeights source(dir.string(), a, hf_tensor_map("stablelm"));
    const std::string e = error_of([&] { (void)source.block(name, 4, 8, 0, 4, 0, 8, 0, 0); });
    EXPECT_NE(e.find("'model.layers.3.self_attn.q_layernorm.norms.1.weight'"), std::string::npos) << e;
    EXPECT_NE(e.find("needs [8]"), std::string::npos) << e;
  }
  fs::remove_all(dir);
}

TEST(CheckpointErrors, UnknownModelTypeIsUnsupported) {
  const std::string e = error_of([] { (void)hf_tensor_map("rwkv"); });
  EXPECT_NE(e.find("rwkv"), std::string::npos) << e;
  EXPECT_NE(e.find("llama"), std::string::npos) << e;  // lists what is supported
}

}  // namespace
}  // namespace fk::runner
