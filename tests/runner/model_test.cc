// Model-level unit tests on one rank: weight sharding equals slicing the full model,
// rope scaling, swapping an op implementation without touching model code, and the
// shape pass (the op instances of a model without computing it).
#include "core/spec/memory.h"
#include "core/spec/spec_file.h"
#include "model_fixtures.h"
#include "kernels/backends.h"
#include "kernels/cpu/elem.h"
#include "runner/model/family.h"
#include "runner/model/transformer/rope_cache.h"
#include "runner/model/transformer/weights.h"
#include "runner/model_stage.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <fmt/format.h>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <set>
#include <tuple>

namespace fk::runner {
namespace {

using test_support::tiny;
using test_support::tiny_stage;

// Element (r, c) of a 2-D fp32 tensor.
float at(const Tensor& t, int64_t r, int64_t c) { return t.data_as<float>()[r * t.size(1) + c]; }

// An fp32 prefill of `batch` sequences of `seq` tokens, and token ids below 500.
spec::Workload fp32_prefill(int64_t batch, int64_t seq) {
  spec::Workload w;
  w.name = "w";
  w.batch = batch;
  w.seq_len = seq;
  w.decode_steps = 0;
  w.dtype = DType::kF32;
  return w;
}

Tensor token_ids(int64_t batch, int64_t seq, int64_t mult, int64_t add) {
  Tensor ids = Tensor::empty(DType::kI64, {batch, seq});
  for (int64_t i = 0; i < batch * seq; ++i) ids.data_as<int64_t>()[i] = (mult * i + add) % 500;
  return ids;
}

// The logits of one prefill step of `a` with `weights` on one CPU rank.
Tensor cpu_logits(const spec::Architecture& a, const spec::Workload& w, const ModelWeights& weights,
                  const Tensor& ids) {
  static const auto cpu = kernels::backend_create(DeviceKind::kCpu, 0);
  Runtime rt(ImplSet::baseline(DeviceKind::kCpu), *cpu);
  const std::unique_ptr<Model> m = build_model({a, w, Placement{}, {}, weights, rt});
  return m->step(ids, w.seq_len, 0);
}

// Calls f(placement) for every rank of tp 2 and of tp 4.
template <typename F>
void for_each_tp_rank(F&& f) {
  for (int64_t tp : {2, 4})
    for (int64_t r = 0; r < tp; ++r) {
      Placement p;
      p.tp = tp;
      p.tp_rank = r;
      f(p);
    }
}

double rel_l2(const Tensor& x, const Tensor& y) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double d = x.data_as<float>()[i] - y.data_as<float>()[i];
    num += d * d;
    den += static_cast<double>(y.data_as<float>()[i]) * y.data_as<float>()[i];
  }
  return std::sqrt(num / den);
}

TEST(Weights, TensorParallelShardsAreSlicesOfTheFullModel) {
  const spec::Architecture a = tiny("llama-3.1-8b");  // 8 heads, 2 kv heads, head_dim 16
  Placement one;
  const ModelWeights full = ModelWeights::generate(a, one, 5);
  const int64_t d = a.head_dim, q = a.num_attention_heads * d, kv = a.num_key_value_heads * d;
  for_each_tp_rank([&](const Placement& p) {
    const int64_t tp = p.tp, r = p.tp_rank;
    const ModelWeights part = ModelWeights::generate(a, p, 5);
    const LayerWeights &f = full.layers[1], &s = part.layers[1];
    const int64_t hq = p.q_heads(a), hk = p.kv_heads(a), k0 = p.kv_head_begin(a);
    for (int64_t i = 0; i < hq * d; ++i)  // q rows
      for (int64_t c : {int64_t{0}, a.hidden_size - 1}) ASSERT_EQ(at(s.qkv_w, i, c), at(f.qkv_w, r * hq * d + i, c));
    for (int64_t i = 0; i < hk * d; ++i) {  // k and v rows (replicated when kv < tp)
      ASSERT_EQ(at(s.qkv_w, hq * d + i, 3), at(f.qkv_w, q + k0 * d + i, 3));
      ASSERT_EQ(at(s.qkv_w, hq * d + hk * d + i, 3), at(f.qkv_w, q + kv + k0 * d + i, 3));
    }
    for (int64_t c = 0; c < hq * d; ++c) ASSERT_EQ(at(s.o_w, 7, c), at(f.o_w, 7, r * hq * d + c));  // o columns
    const int64_t il = a.intermediate_size / tp;
    for (int64_t i = 0; i < il; ++i) {  // gate and up rows, down columns
      ASSERT_EQ(at(s.up_w, i, 2), at(f.up_w, r * il + i, 2));
      ASSERT_EQ(at(s.up_w, il + i, 2), at(f.up_w, a.intermediate_size + r * il + i, 2));
      ASSERT_EQ(at(s.down_w, 5, i), at(f.down_w, 5, r * il + i));
    }
    EXPECT_EQ(s.attn_norm_w.span<float>()[9], f.attn_norm_w.span<float>()[9]);  // replicated
  });
}

// Per-head q/k norm weights (Command R+'s, qk_norm_per_head) follow their heads: rank r
// holds the rows of its q heads and of its kv heads (replicated when kv heads < tp), and
// LayerNorm models with a bias get per-head biases the same way.
TEST(Weights, PerHeadQkNormsAreShardedWithTheirHeads) {
  spec::Architecture a = tiny("llama-3.1-8b");  // 8 heads, 2 kv heads, head_dim 16
  a.attention.qk_norm = a.attention.qk_norm_per_head = true;
  a.norm.kind = spec::NormKind::kLayerNorm;
  Placement one;
  const ModelWeights full = ModelWeights::generate(a, one, 5);
  const int64_t d = a.head_dim;
  ASSERT_EQ(full.layers[0].q_norm.numel(), a.num_attention_heads * d);
  ASSERT_EQ(full.layers[0].k_norm.numel(), a.num_key_value_heads * d);
  ASSERT_TRUE(full.layers[0].q_norm_b.defined());
  for_each_tp_rank([&](const Placement& p) {
    const ModelWeights part = ModelWeights::generate(a, p, 5);
    const LayerWeights &f = full.layers[1], &s = part.layers[1];
    const int64_t hq = p.q_heads(a), hk = p.kv_heads(a), k0 = p.kv_head_begin(a), r = p.tp_rank;
    ASSERT_EQ(s.q_norm.numel(), hq * d);
    ASSERT_EQ(s.k_norm.numel(), hk * d);
    for (int64_t i = 0; i < hq * d; ++i) {
      ASSERT_EQ(s.q_norm.span<float>()[i], f.q_norm.span<float>()[r * hq * d + i]) << "tp " << p.tp << " rank " << r;
      ASSERT_EQ(s.q_norm_b.span<float>()[i], f.q_norm_b.span<float>()[r * hq * d + i]);
    }
    for (int64_t i = 0; i < hk * d; ++i) ASSERT_EQ(s.k_norm.span<float>()[i], f.k_norm.span<float>()[k0 * d + i]);
  });
  // The heads' weights differ (each head its own), so a shared weight could not stand in.
  EXPECT_NE(full.layers[1].q_norm.span<float>()[0], full.layers[1].q_norm.span<float>()[d]);
  // StableLM's (qk_norm_bias: false): the per-head LayerNorms have no bias though the
  // model's norms do, and the memory estimate counts the weights alone.
  const int64_t with_bias = spec::layer_parameters_per_rank(a, 0, 1);
  a.attention.qk_norm_bias = false;
  const ModelWeights plain = ModelWeights::generate(a, one, 5);
  EXPECT_FALSE(plain.layers[0].q_norm_b.defined());
  EXPECT_FALSE(plain.layers[0].k_norm_b.defined());
  EXPECT_TRUE(plain.layers[0].attn_norm_b.defined());
  EXPECT_EQ(spec::layer_parameters_per_rank(a, 0, 1), with_bias - (a.num_attention_heads + a.num_key_value_heads) * d);
}

// A step of more than spec::kMoeChunkTokens tokens runs its routed experts in chunks (as
// vLLM's fused_experts): the sequence that straddles the chunk boundary gets the logits
// it gets alone.
TEST(Moe, LongStepsRunTheExpertsInChunksWithTheSameResult) {
  spec::Architecture a = tiny("mixtral-8x7b");
  a.num_hidden_layers = 1;
  const int64_t batch = 42, seq = 392;  // 16464 tokens: the last sequence spans rows 16072..16463
  ASSERT_GT(batch * seq, spec::kMoeChunkTokens);
  ASSERT_LT((batch - 1) * seq, spec::kMoeChunkTokens);
  const ModelWeights weights = ModelWeights::generate(a, Placement{}, 3);
  const Tensor ids = token_ids(batch, seq, 7, 1);
  const Tensor all = cpu_logits(a, fp32_prefill(batch, seq), weights, ids);
  Tensor one = Tensor::empty(DType::kI64, {1, seq});
  std::memcpy(one.data(), ids.data_as<int64_t>() + (batch - 1) * seq, static_cast<size_t>(seq) * sizeof(int64_t));
  const Tensor alone = cpu_logits(a, fp32_prefill(1, seq), weights, one);
  const int64_t v = alone.numel();
  ASSERT_EQ(all.numel(), batch * v);
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < v; ++i) {
    const double x = all.data_as<float>()[(batch - 1) * v + i], y = alone.data_as<float>()[i];
    diff += (x - y) * (x - y);
    norm += y * y;
  }
  EXPECT_LT(std::sqrt(diff / norm), 1e-5);
}

// gpt-oss: the sinks follow their heads, the experts' gate/up biases their I-slices (each
// expert's gate block, then its up block), the router and output biases are replicated;
// sinks stay fp32 with the workload dtype's values; the memory estimate counts them all.
TEST(Weights, GptOssSinksAndExpertBiasesAreShardedAndCounted) {
  const spec::Architecture a = tiny("gpt-oss-120b");
  Placement one;
  const ModelWeights full = ModelWeights::generate(a, one, 5);
  const int64_t e = a.moe.num_experts, im = a.moe.moe_intermediate_size;
  ASSERT_EQ(full.layers[0].sinks.numel(), a.num_attention_heads);
  ASSERT_EQ(full.layers[0].w13_b.shape(), (Shape{e, 2 * im}));
  ASSERT_EQ(full.layers[0].w2_b.shape(), (Shape{e, a.hidden_size}));
  ASSERT_EQ(full.layers[0].router_b.numel(), e);
  for_each_tp_rank([&](const Placement& p) {
    const ModelWeights part = ModelWeights::generate(a, p, 5);
    const LayerWeights &f = full.layers[1], &s = part.layers[1];
    const int64_t hq = p.q_heads(a), iml = im / p.tp, r = p.tp_rank;
    for (int64_t i = 0; i < hq; ++i) ASSERT_EQ(s.sinks.span<float>()[i], f.sinks.span<float>()[r * hq + i]);
    for (int64_t x = 0; x < e; ++x)
      for (int64_t j = 0; j < iml; ++j) {
        ASSERT_EQ(at(s.w13_b, x, j), at(f.w13_b, x, r * iml + j)) << "gate bias, expert " << x;
        ASSERT_EQ(at(s.w13_b, x, iml + j), at(f.w13_b, x, im + r * iml + j)) << "up bias, expert " << x;
      }
    EXPECT_EQ(s.w2_b.span<float>()[7], f.w2_b.span<float>()[7]);
    EXPECT_EQ(s.router_b.span<float>()[3], f.router_b.span<float>()[3]);
    int64_t made = 0;
    ModelWeights one_layer;
    one_layer.layers.push_back(s);
    for (const auto& [name, t] : one_layer.named_tensors()) made += t.numel();
    EXPECT_EQ(made, spec::layer_parameters_per_rank(a, 1, p.tp)) << "tp " << p.tp;
  });
  const ModelWeights bf16 = full.to_dtype(DType::kBF16);
  ASSERT_EQ(bf16.layers[0].sinks.dtype(), DType::kF32);
  const Tensor want = full.layers[0].sinks.to_dtype(DType::kBF16).to_dtype(DType::kF32);
  int64_t moved = 0;
  for (int64_t i = 0; i < a.num_attention_heads; ++i) {
    EXPECT_EQ(bf16.layers[0].sinks.span<float>()[i], want.span<float>()[i]);
    moved += want.span<float>()[i] != full.layers[0].sinks.span<float>()[i];
  }
  EXPECT_GT(moved, 0) << "the fp32 draws were already bf16 values: the rounding went untested";
}

// ModelWeights::load makes each tensor in place, block by block, on the backend; its
// result must be build()'s host weights rounded once, for every layout and family
// (fused q/k/v and gate/up, experts, Gemma's folded norm offset, padded vocab blocks, a
// tied head that stays one tensor).
TEST(Weights, LoadedInPlaceEqualsTheHostMasterRounded) {
  const auto cpu = kernels::backend_create(DeviceKind::kCpu, 0);
  const RandomWeights source(21);
  for (const char* name :
       {"llama-3.1-8b", "gemma-2-9b", "qwen3-30b-a3b", "gpt2", "bert-base", "gpt-oss-120b", "deepseek-v3"}) {
    const spec::Architecture a = tiny(name);
    for (const Placement& pl : test_support::weight_test_placements()) {
      for (DType dt : {DType::kF32, DType::kBF16}) {
        const ModelWeights want = ModelWeights::build(a, pl, source).to_dtype(dt);
        const ModelWeights got = ModelWeights::load(a, pl, source, dt, *cpu);
        test_support::expect_same_weights(got, *cpu, want, fmt::format("{} tp rank {} {}", name, pl.tp_rank,
                                                                       dtype_name(dt)));
        if (a.embedding.tied && got.lm_head.defined() && got.embed.defined()) {
          EXPECT_EQ(got.lm_head.data(), got.embed.data()) << name << ": the tied head is one tensor";
        }
      }
    }
  }
}

TEST(Weights, VocabBlocksArePaddedAndPipelineStagesHoldTheirLayers) {
  const spec::Architecture a = tiny("gpt2");  // vocab 509, tied, learned positions
  Placement one;
  const ModelWeights full = ModelWeights::generate(a, one, 3);
  Placement last;
  last.tp = 4;
  last.tp_rank = 3;
  last.pp = 2;
  last.pp_rank = 1;
  const ModelWeights w = ModelWeights::generate(a, last, 3);
  EXPECT_EQ(w.lm_head.size(0), 128);  // ceil(509 / 4)
  EXPECT_EQ(last.vocab_rows(a), 509 - 3 * 128);
  EXPECT_EQ(at(w.lm_head, 0, 1), at(full.lm_head, 3 * 128, 1));  // tied: the embedding's rows
  EXPECT_EQ(at(w.lm_head, 127, 1), 0.0f);                          // padding row
  EXPECT_FALSE(w.pos_embed.defined());                             // first stage only
  ASSERT_EQ(w.layers.size(), 2u);
  EXPECT_EQ(w.layers[0].index, 2);
}

// The LM head's options act on the logits alone: logit_scale multiplies them (0.5 is
// exact in fp32), a bias adds its own element to every row (its values are the
// lm_head.bias the weights hold, zero past the vocabulary).
TEST(LmHead, LogitScaleMultipliesAndBiasAddsItsVector) {
  const spec::Workload w = fp32_prefill(2, 5);
  const Tensor ids = token_ids(2, 5, 13, 4);
  auto logits = [&](const spec::Architecture& a, ModelWeights* out) {
    const ModelWeights weights = ModelWeights::generate(a, Placement{}, 3);
    if (out != nullptr) *out = weights;
    return cpu_logits(a, w, weights, ids);
  };
  const spec::Architecture plain = tiny("llama-3.1-8b");
  const Tensor base = logits(plain, nullptr);
  spec::Architecture scaled = plain;
  scaled.head.logit_scale = 0.5;
  const Tensor half = logits(scaled, nullptr);
  ASSERT_EQ(half.shape(), base.shape());
  for (int64_t i = 0; i < base.numel(); ++i) ASSERT_EQ(half.data_as<float>()[i], 0.5f * base.data_as<float>()[i]) << i;
  spec::Architecture biased = plain;
  biased.head.bias = true;
  ModelWeights wb;
  const Tensor with_bias = logits(biased, &wb);
  ASSERT_TRUE(wb.lm_head_b.defined());
  const int64_t v = plain.vocab_size;
  double moved = 0;
  for (int64_t r = 0; r < base.size(0); ++r)
    for (int64_t c = 0; c < v; ++c) {
      const float b = wb.lm_head_b.data_as<float>()[c];
      EXPECT_NEAR(at(with_bias, r, c), at(base, r, c) + b, 1e-5) << r << " " << c;
      moved += std::fabs(b);
    }
  EXPECT_GT(moved, 0) << "the bias is not zero";
}

// Granite's multipliers, checked by what they must leave unchanged. RMSNorm does not
// see a common factor (with a negligible eps), so multiplying the embeddings and every
// residual branch by the same c multiplies the whole stream by c and leaves the logits
// as they were, while either alone changes them; and attention.scale = s is the scale
// that query_pre_attn_scalar = 1/s^2 gives.
TEST(Multipliers, EmbeddingAndResidualMultipliersScaleTheStreamAndAttentionScaleIsTheScale) {
  const spec::Workload w = fp32_prefill(2, 6);
  const Tensor ids = token_ids(2, 6, 29, 7);
  spec::Architecture plain = tiny("llama-3.1-8b");
  plain.norm.eps = 1e-12;
  const ModelWeights weights = ModelWeights::generate(plain, Placement{}, 5);
  auto logits = [&](const spec::Architecture& a) { return cpu_logits(a, w, weights, ids); };
  const Tensor base = logits(plain);
  spec::Architecture emb = plain;
  emb.embedding.multiplier = 4.0;
  spec::Architecture res = plain;
  res.norm.residual_multiplier = 4.0;
  spec::Architecture both = emb;
  both.norm.residual_multiplier = 4.0;
  EXPECT_GT(rel_l2(logits(emb), base), 1e-2) << "the embedding multiplier alone changes the model";
  EXPECT_GT(rel_l2(logits(res), base), 1e-2) << "the residual multiplier alone changes the model";
  EXPECT_LT(rel_l2(logits(both), base), 1e-6) << "together they scale the stream, which RMSNorm does not see";

  spec::Architecture scaled = plain;
  scaled.attention.scale = 0.3;
  spec::Architecture pre = plain;
  pre.attention.query_pre_attn_scalar = 1.0 / (0.3 * 0.3);
  const Tensor by_scale = logits(scaled);
  EXPECT_GT(rel_l2(by_scale, base), 1e-3) << "0.3 is not the default 1/sqrt(head_dim)";
  EXPECT_LT(rel_l2(by_scale, logits(pre)), 1e-6);
}

// norm.bias false (Cohere): every LayerNorm gets a zero bias, drawn from no source (so
// no checkpoint is asked for one); with the bias on, it is drawn.
TEST(Weights, LayerNormWithoutBiasHasAZeroOne) {
  spec::Architecture a = tiny("gpt-neox-20b");
  ASSERT_EQ(a.norm.kind, spec::NormKind::kLayerNorm);
  a.norm.bias = false;
  const ModelWeights w = ModelWeights::generate(a, Placement{}, 3);
  ASSERT_TRUE(w.layers.at(0).attn_norm_b.defined());
  for (const Tensor* t : {&w.layers[0].attn_norm_b, &w.layers[0].mlp_norm_b, &w.final_norm_b})
    for (float v : t->span<float>()) ASSERT_EQ(v, 0.0f);
  spec::Architecture with_bias = a;
  with_bias.norm.bias = true;
  const ModelWeights wb = ModelWeights::generate(with_bias, Placement{}, 3);
  double moved = 0;
  for (float v : wb.layers[0].attn_norm_b.span<float>()) moved += std::fabs(v);
  EXPECT_GT(moved, 0) << "with a bias, the bias is drawn";
}

// norm.weight false (OLMo): every hidden-size norm scales by 1, read from no source; the
// model equals the one whose drawn norm weights are all set to 1. q/k norms keep theirs.
TEST(Weights, NormWithoutWeightScalesByOne) {
  const spec::Workload w = fp32_prefill(2, 5);
  const Tensor ids = token_ids(2, 5, 31, 3);
  spec::Architecture plain = tiny("gpt-neox-20b");
  spec::Architecture unit = plain;
  unit.norm.weight = false;
  ModelWeights wu = ModelWeights::generate(unit, Placement{}, 5);
  ModelWeights wp = ModelWeights::generate(plain, Placement{}, 5);
  std::vector<Tensor*> drawn = {&wp.final_norm_w};
  for (auto& l : wp.layers) drawn.insert(drawn.end(), {&l.attn_norm_w, &l.mlp_norm_w});
  const Tensor before = cpu_logits(plain, w, wp, ids);
  for (Tensor* t : drawn) {
    ASSERT_TRUE(t->defined());
    for (float& v : t->span<float>()) v = 1.0f;
  }
  for (const Tensor* t : {&wu.final_norm_w, &wu.layers.at(0).attn_norm_w, &wu.layers.at(0).mlp_norm_w})
    for (float v : t->span<float>()) ASSERT_EQ(v, 1.0f);
  const Tensor ones = cpu_logits(plain, w, wp, ids), none = cpu_logits(unit, w, wu, ids);
  EXPECT_GT(rel_l2(before, ones), 1e-3) << "the drawn weights are not all 1";
  EXPECT_EQ(rel_l2(none, ones), 0.0);
}

// position.rope_layers: a NoPE layer rotates nothing. Every layer NoPE is the model
// without positions, bit for bit; every layer rope is the default; a mix is neither.
TEST(Rope, NopeLayersRotateNothing) {
  const spec::Workload w = fp32_prefill(2, 6);
  const Tensor ids = token_ids(2, 6, 31, 3);
  spec::Architecture rope = tiny("llama-3.1-8b");
  spec::Architecture none = rope, all_nope = rope, all_rope = rope, mixed = rope;
  none.position.kind = spec::PositionKind::kNone;
  all_nope.position.rope_layers = {false};
  all_rope.position.rope_layers = {true};
  mixed.position.rope_layers = {true, false};
  const ModelWeights weights = ModelWeights::generate(rope, Placement{}, 4);
  const Tensor base = cpu_logits(rope, w, weights, ids);
  EXPECT_EQ(rel_l2(cpu_logits(all_rope, w, weights, ids), base), 0.0);
  EXPECT_EQ(rel_l2(cpu_logits(all_nope, w, weights, ids), cpu_logits(none, w, weights, ids)), 0.0);
  const Tensor m = cpu_logits(mixed, w, weights, ids);
  EXPECT_GT(rel_l2(m, base), 1e-4) << "the second layer has no rope";
  EXPECT_GT(rel_l2(m, cpu_logits(none, w, weights, ids)), 1e-4) << "the first layer has rope";
}

// moe.shared_expert_gate (Qwen2-MoE): the shared experts' output times sigmoid(x . g).
// With g = 0 the gate is exactly 1/2, so the model equals the ungated one whose shared
// down projection is halved (a power of two: exact in fp32).
TEST(Moe, SharedExpertGateScalesTheSharedOutputBySigmoid) {
  const spec::Workload w = fp32_prefill(2, 5);
  const Tensor ids = token_ids(2, 5, 31, 3);
  spec::Architecture gated = tiny("mixtral-8x7b");
  gated.moe.shared_experts = 1;
  gated.moe.shared_intermediate_size = 32;
  gated.moe.shared_expert_gate = true;
  spec::Architecture plain = gated;
  plain.moe.shared_expert_gate = false;
  auto logits = [&](const spec::Architecture& a, const ModelWeights& weights) {
    return cpu_logits(a, w, weights, ids);
  };
  ModelWeights wg = ModelWeights::generate(gated, Placement{}, 9);
  ModelWeights wp = ModelWeights::generate(plain, Placement{}, 9);
  ASSERT_TRUE(wg.layers.at(0).shared_gate_w.defined());
  EXPECT_EQ(wg.layers[0].shared_gate_w.shape(), (Shape{1, gated.hidden_size}));
  EXPECT_FALSE(wp.layers.at(0).shared_gate_w.defined());
  const Tensor drawn = logits(gated, wg);
  for (auto& l : wg.layers)
    for (float& v : l.shared_gate_w.span<float>()) v = 0.0f;
  for (auto& l : wp.layers)
    for (float& v : l.shared_down_w.span<float>()) v *= 0.5f;
  const Tensor half = logits(gated, wg), halved = logits(plain, wp);
  ASSERT_EQ(half.shape(), halved.shape());
  double moved = 0;
  for (int64_t i = 0; i < half.numel(); ++i) {
    ASSERT_FLOAT_EQ(half.data_as<float>()[i], halved.data_as<float>()[i]) << i;
    moved += std::fabs(drawn.data_as<float>()[i] - half.data_as<float>()[i]);
  }
  EXPECT_GT(moved, 1e-3) << "the drawn gate is not 1/2 everywhere";
}

TEST(Rope, Llama3ScalingFollowsThePublishedFormula) {
  spec::Diagnostics d;
  auto doc = spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/llama-3.1-8b.yaml", d);
  const spec::Architecture a = doc->full;  // theta 5e5, rot 128, factor 8, low 1, high 4, L0 8192
  const auto f = rope_frequencies(a, spec::LayerType::kFull);
  ASSERT_EQ(f.size(), 64u);
  auto plain = [](int64_t i) { return std::pow(500000.0, -2.0 * static_cast<double>(i) / 128.0); };
  EXPECT_DOUBLE_EQ(f[0], 1.0);                       // wavelength 2 pi < 2048: unchanged
  EXPECT_DOUBLE_EQ(f[63], plain(63) / 8.0);          // wavelength > 8192: divided by factor
  const double wl = 2 * std::numbers::pi / plain(34);  // ~6690: between the bands
  ASSERT_GT(wl, 2048.0);
  ASSERT_LT(wl, 8192.0);
  const double s = (8192.0 / wl - 1.0) / 3.0;
  EXPECT_NEAR(f[34], (1 - s) * plain(34) / 8.0 + s * plain(34), 1e-18);
  const Tensor cache = rope_cache(a, spec::LayerType::kFull, 5, DType::kF32);
  EXPECT_FLOAT_EQ(cache.data_as<float>()[3 * 128 + 0], std::cos(3.0f));
  EXPECT_FLOAT_EQ(cache.data_as<float>()[3 * 128 + 64], std::sin(3.0f));
}

// YaRN (arXiv 2309.00071, as HF's _compute_yarn_parameters): frequencies below the
// correction range are kept, above it divided by the factor, blended linearly between;
// cos and sin are scaled by the attention factor (from the factor, or from the mscales'
// ratio); without truncation the range's ends are not rounded; local layers of a model
// with local_rope_theta are not scaled.
TEST(Rope, YarnScalingFollowsThePublishedFormula) {
  spec::Diagnostics d;
  auto doc = spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/llama-3.1-8b.yaml", d);
  spec::Architecture a = doc->full;  // theta 5e5, rot 128
  spec::RopeScaling& y = a.position.rope_scaling;
  y = {};
  y.type = spec::RopeScalingType::kYarn;
  y.factor = 4.0;
  y.original_max_position_embeddings = 4096;
  const double theta = 500000.0;
  auto plain = [&](int64_t i) { return std::pow(theta, -2.0 * static_cast<double>(i) / 128.0); };
  auto dim_of = [&](double n) { return 128.0 * std::log(4096.0 / (n * 2 * std::numbers::pi)) / (2 * std::log(theta)); };
  const auto check = [&](double low, double high, const char* what) {
    const auto f = rope_frequencies(a, spec::LayerType::kFull);
    ASSERT_EQ(f.size(), 64u);
    int kept = 0, divided = 0, blended = 0;
    for (int64_t i = 0; i < 64; ++i) {
      const double r = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
      EXPECT_NEAR(f[static_cast<size_t>(i)], r * plain(i) / 4.0 + (1 - r) * plain(i), 1e-15 * plain(i))
          << what << " i " << i;
      kept += r == 0.0, divided += r == 1.0, blended += r > 0.0 && r < 1.0;
    }
    EXPECT_GT(kept, 0) << what;
    EXPECT_GT(divided, 0) << what;
    EXPECT_GT(blended, 0) << what;
  };
  check(std::floor(dim_of(32.0)), std::ceil(dim_of(1.0)), "truncated");
  EXPECT_DOUBLE_EQ(rope_attention_factor(a, spec::LayerType::kFull), 0.1 * std::log(4.0) + 1.0);
  const Tensor cache = rope_cache(a, spec::LayerType::kFull, 5, DType::kF64);
  const double af = 0.1 * std::log(4.0) + 1.0;
  EXPECT_NEAR(cache.data_as<double>()[3 * 128 + 0], af * std::cos(3.0), 1e-7);
  EXPECT_NEAR(cache.data_as<double>()[3 * 128 + 64], af * std::sin(3.0), 1e-7);

  y.truncate = false;
  y.beta_fast = 16.0;
  y.beta_slow = 2.0;
  check(dim_of(16.0), dim_of(2.0), "not truncated");
  y.mscale = 1.0;
  y.mscale_all_dim = 0.5;
  EXPECT_DOUBLE_EQ(rope_attention_factor(a, spec::LayerType::kFull),
                   (0.1 * std::log(4.0) + 1.0) / (0.1 * 0.5 * std::log(4.0) + 1.0));
  y.attention_factor = 0.75;
  EXPECT_DOUBLE_EQ(rope_attention_factor(a, spec::LayerType::kFull), 0.75);
  a.position.local_rope_theta = 10000.0;
  EXPECT_DOUBLE_EQ(rope_attention_factor(a, spec::LayerType::kSliding), 1.0);
  EXPECT_DOUBLE_EQ(rope_frequencies(a, spec::LayerType::kSliding)[63], std::pow(10000.0, -126.0 / 128.0));
}

// A deliberately lossy rms_norm (output rounded to 4 mantissa bits) swapped in through
// the ImplSet: the model code is unchanged, the selected run's trace shows the damage.
TEST(ModelStage, SwappedImplementationIsTracedAgainstBaselineAndFp32) {
  kernels::register_builtin_ops();
  const kernels::OpImpl& base = kernels::OpRegistry::global().impl("rms_norm", "cpu");
  static kernels::OpImpl lossy{"rms_norm", "test-lossy", DeviceKind::kCpu, nullptr, [&base](const kernels::OpCall& c) {
                                 base.run(c);
                                 Tensor out = c.arg(0);
                                 auto* bits = out.data_as<uint16_t>();
                                 for (int64_t i = 0; i < out.numel(); ++i) bits[i] &= 0xfff8;  // bf16: drop 3 bits
                               }};
  ModelStageConfig c = tiny_stage("llama-3.1-8b", 2, 8, 1, 9);
  ImplSet sel = ImplSet::baseline(DeviceKind::kCpu);
  sel.set("rms_norm", &lossy);
  EXPECT_EQ(sel.overrides(), "rms_norm=test-lossy");
  c.selected = sel;
  const ModelStageOutput out = model_stage_run(c);
  double base_err = 0, sel_err = 0, sel_vs_base = 0;
  for (const auto& e : out.layers) {
    if (e.step != "prefill" || e.layer != c.arch.num_hidden_layers - 1) continue;
    if (e.run == "baseline") base_err = std::sqrt(e.err_vs_fp32 / e.ref_fp32);
    if (e.run == "selected") {
      sel_err = std::sqrt(e.err_vs_fp32 / e.ref_fp32);
      sel_vs_base = std::sqrt(e.err_vs_baseline / e.ref_baseline);
    }
  }
  EXPECT_GT(base_err, 0.0);
  EXPECT_GT(sel_err, 2 * base_err) << "the lossy norm must show in the trace";
  EXPECT_GT(sel_vs_base, 0.0);
  bool saw_selected_logits = false;
  for (const auto& l : out.logits) saw_selected_logits |= l.run == "selected";
  EXPECT_TRUE(saw_selected_logits);
  EXPECT_FALSE(out.instances.empty());
}

// Each run records its peak memory on the backend's device: at least its weights (on
// the CPU the fp32 master stays for every run), and in use never above reserved.
TEST(ModelStage, EveryRunRecordsItsPeakMemory) {
  const ModelStageConfig c = tiny_stage("llama-3.1-8b", 2, 8, 1, 5);
  const ModelStageOutput out = model_stage_run(c);
  ASSERT_EQ(out.memory.size(), 2u);
  EXPECT_EQ(out.memory[0].run, "fp32");
  EXPECT_EQ(out.memory[1].run, "baseline");
  const spec::MemoryEstimate est = spec::memory_estimate(c.arch, c.workload, spec::Layout{}, DeviceKind::kCpu);
  for (const MemoryPeak& m : out.memory) {
    EXPECT_EQ(m.device, "cpu");
    EXPECT_EQ(m.rank, 0);
    EXPECT_GE(m.peak_in_use_bytes, est.parameters * 4) << m.run << ": the fp32 master alone is this much";
    EXPECT_LE(m.peak_in_use_bytes, m.peak_reserved_bytes) << m.run;
  }
}

TEST(ModelStage, EncoderTracesItsFinalHiddenStates) {
  const ModelStageConfig c = tiny_stage("bert-base", 2, 12, 0, 1);
  const ModelStageOutput out = model_stage_run(c);
  EXPECT_TRUE(out.logits.empty());
  bool final_row = false;
  for (const auto& e : out.layers) final_row |= e.layer == c.arch.num_hidden_layers && e.run == "baseline";
  EXPECT_TRUE(final_row);
  EXPECT_EQ(out.steps.size(), 2u);  // fp32 and baseline prefill, no decode
}

TEST(ModelStage, SoftcappedSlidingModelRunsEveryStep) {
  const ModelStageConfig c = tiny_stage("gemma-2-9b", 1, 20, 2, 4);  // 20 tokens: beyond the tiny window (16)
  const ModelStageOutput out = model_stage_run(c);
  ASSERT_EQ(out.logits.size(), 3u);
  for (const auto& l : out.logits) EXPECT_TRUE(std::isfinite(l.kl_sum_fp32));
  EXPECT_TRUE(out.fp32_logits.defined());
  for (float v : out.fp32_logits.span<float>()) ASSERT_LE(std::abs(v), 30.0f);  // final soft-cap 30
}

// Every shipped architecture builds its weights and runs prefill and a decode step
// at its tiny preset, and its logits are finite (a regression: GQA with q/k/v biases,
// Qwen2.5's case, once failed while building the weights).
TEST(ModelStage, EveryShippedArchitectureRunsItsTinyPreset) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(FK_SOURCE_DIR) + "/specs/architectures")) {
    const std::string name = entry.path().stem().string();
    ModelStageConfig c;
    c.arch = tiny(name);
    c.workload.name = "w";
    c.workload.batch = 2;
    c.workload.seq_len = 6;
    c.workload.decode_steps = c.arch.head.kind == spec::HeadKind::kLm ? 1 : 0;
    c.seed = 3;
    c.record_instances = false;
    ModelStageOutput out;
    ASSERT_NO_THROW(out = model_stage_run(c)) << name;
    EXPECT_FALSE(out.layers.empty()) << name;
    if (out.fp32_logits.defined()) {
      for (float v : out.fp32_logits.span<float>()) ASSERT_TRUE(std::isfinite(v)) << name;
    }
    ++n;
  }
  EXPECT_GE(n, 11u);
}

// Steps on the CPU stay eager (it has no graphs): every step of every iteration has op
// timings and no step row says it replayed a graph. An untimed Runtime (what a capture
// uses) runs the ops but reports nothing.
TEST(ModelStage, CpuStepsStayEagerAndUntimedOpsReportNothing) {
  ModelStageConfig c = tiny_stage("llama-3.1-8b", 2, 6, 2, 0);
  c.iterations = 3;
  c.record_instances = false;
  const ModelStageOutput out = model_stage_run(c);
  std::set<std::tuple<std::string, int64_t, std::string>> timed;
  for (const auto& op : out.ops) timed.insert({op.run, op.iteration, op.step});
  for (const auto& s : out.steps) {
    EXPECT_FALSE(s.graph) << s.run << " " << s.step;
    EXPECT_TRUE(timed.count({s.run, s.iteration, s.step})) << s.run << " " << s.iteration << " " << s.step;
  }

  struct Count final : EventSink {
    int events = 0;
    void on_event(const OpEvent&) override { ++events; }
  } sink;
  const auto cpu = kernels::backend_create(DeviceKind::kCpu, 0);
  Runtime rt(ImplSet::baseline(DeviceKind::kCpu), *cpu);
  rt.set_sink(&sink);
  const Tensor x = Tensor::zeros(DType::kF32, {2, 8});
  rt.set_timed(false);
  rt.run("scale", "s", kernels::OpCall{{x}, {2.0}});
  rt.flush();
  EXPECT_EQ(sink.events, 0);
  rt.set_timed(true);
  rt.run("scale", "s", kernels::OpCall{{x}, {2.0}});
  rt.flush();
  EXPECT_EQ(sink.events, 1);
}

std::string instance_key(const InstanceRecord& r) {
  std::string k = fmt::format("{} {} {} calls={} measured={} layers=", r.op, r.role, dtype_name(r.dtype), r.calls,
                              r.measured);
  for (int64_t l : r.layers) k += fmt::format("{},", l);
  for (const auto& [d, v] : r.shape.dims) k += fmt::format(" {}={}", d, v);
  for (double p : r.shape.params) k += fmt::format(" {}", p);
  return k;
}

// The shape pass records exactly what the baseline run records — every op, role, shape,
// dtype, call count, layer list and measured mark — for every shipped architecture,
// for prefill and decode workloads and for a tensor-parallel shard.
TEST(ShapePass, FindsTheInstancesOfTheBaselineRun) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(FK_SOURCE_DIR) + "/specs/architectures")) {
    const std::string name = entry.path().stem().string();
    for (const spec::Phase phase : {spec::Phase::kPrefill, spec::Phase::kDecode})
      for (const int64_t tp : {1, 2}) {
        ModelStageConfig c;
        c.arch = tiny(name);
        c.workload.name = "w";
        c.workload.phase = phase;
        c.workload.batch = 2;
        c.workload.seq_len = 6;
        c.workload.decode_steps = c.arch.head.kind == spec::HeadKind::kLm ? 2 : 0;
        if (phase == spec::Phase::kDecode && c.workload.decode_steps == 0) continue;
        c.placement.tp = tp;
        c.placement.tp_rank = tp - 1;
        c.seed = 3;
        if (!spec::layout_misfits(c.arch, c.workload, spec::Layout{tp, 1, 1}).empty()) continue;
        const ModelStageOutput run = model_stage_run(c);
        const std::vector<InstanceRecord> shapes = model_stage_instances(c);
        ASSERT_FALSE(run.instances.empty()) << name;
        ASSERT_EQ(shapes.size(), run.instances.size()) << name;
        for (size_t i = 0; i < shapes.size(); ++i)
          ASSERT_EQ(instance_key(shapes[i]), instance_key(run.instances[i])) << name << " tp" << tp;
        ++n;
      }
  }
  EXPECT_GE(n, 30u);
}

// Peak resident memory of this process, bytes.
double peak_rss() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

// Llama 3.1 8B at its published sizes (16 GB of bf16 weights): the shape pass finds
// its real shapes without the memory to hold it.
TEST(ShapePass, PublishedModelSizesNeedNoMemory) {
  spec::Diagnostics d;
  auto doc = spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/llama-3.1-8b.yaml", d);
  ASSERT_TRUE(doc.has_value()) << d.to_string();
  ModelStageConfig c;
  c.arch = doc->full;
  c.workload.name = "w";
  c.workload.batch = 2;
  c.workload.seq_len = 64;
  c.workload.decode_steps = 1;
  const double before = peak_rss();
  const std::vector<InstanceRecord> shapes = model_stage_instances(c);
  EXPECT_LT(peak_rss() - before, 1.5e9) << "the placeholders took memory";
  bool norm = false, down = false;
  for (const auto& r : shapes) {
    if (r.op == "fused_add_rms_norm" && r.role == "mlp.norm" && r.measured) {
      EXPECT_EQ(r.shape.dim("hidden"), 4096);
      EXPECT_EQ(r.shape.dim("tokens"), 128);
      EXPECT_EQ(r.calls, 32);  // every layer's
      norm = true;
    }
    if (r.op == "linear" && r.role == "mlp.down_proj" && r.measured) {
      EXPECT_EQ(r.layers.size(), 32u);
      down = true;
    }
  }
  EXPECT_TRUE(norm);
  EXPECT_TRUE(down);
}

}  // namespace
}  // namespace fk::runner
