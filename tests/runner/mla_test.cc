// DeepSeek-V3's layers on one rank (CPU backend): multi-head latent attention's weights
// are per-head slices of the checkpoint tensors (kv_b_proj split into the absorbed key
// and value halves) and are counted as the planner counts them; the latent cache carries
// a sequence from one step to the next exactly (a prefill then decode steps gives a
// longer prefill's logits); the grouped router is the one that runs.
#include "core/spec/families/mla.h"
#include "core/spec/memory.h"
#include "kernels/backends.h"
#include "model_fixtures.h"
#include "runner/model/family.h"
#include "runner/runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace fk::runner {
namespace {

using test_support::tiny;

float at3(const Tensor& t, int64_t i, int64_t j, int64_t k) {
  return t.data_as<float>()[(i * t.size(1) + j) * t.size(2) + k];
}
float at2(const Tensor& t, int64_t r, int64_t c) { return t.data_as<float>()[r * t.size(1) + c]; }

TEST(MlaWeights, HeadShardsAreSlicesOfTheCheckpointTensorsAndCountedAsPlanned) {
  const spec::Architecture a = tiny("deepseek-v3");
  const spec::MlaSpec& m = a.sections.get<spec::MlaSpec>();
  const ModelWeights full = ModelWeights::generate(a, Placement{}, 5);
  const int64_t heads = a.num_attention_heads, nope = m.qk_nope_head_dim, v = m.v_head_dim, dc = m.kv_lora_rank;
  const LayerWeights& f = full.layers[1];
  ASSERT_EQ(f.mixer_tensor("w_uk").shape(), (Shape{heads, nope, dc}));
  ASSERT_EQ(f.mixer_tensor("w_uv").shape(), (Shape{heads, v, dc}));
  ASSERT_EQ(f.mixer_tensor("kv_a_w").shape(), (Shape{dc + a.head_dim, a.hidden_size}));
  ASSERT_EQ(f.score_bias.numel(), a.moe.num_experts);
  EXPECT_FALSE(f.qkv_w.defined()) << "MLA layers have no fused q/k/v";
  EXPECT_FALSE(f.o_w.defined()) << "MLA's o_proj is its own tensor (LayerWeights::mixer)";
  EXPECT_FALSE(f.mixer_tensor("no_such").defined());
  for (int64_t tp : {1, 2, 4}) {
    for (int64_t r = 0; r < tp; ++r) {
      Placement p;
      p.tp = tp;
      p.tp_rank = r;
      const ModelWeights part = ModelWeights::generate(a, p, 5);
      const LayerWeights& s = part.layers[1];
      const int64_t hl = heads / tp, h0 = r * hl;
      for (int64_t h = 0; h < hl; ++h)
        for (int64_t j = 0; j < nope; j += 3) {
          ASSERT_EQ(at3(s.mixer_tensor("w_uk"), h, j, 1), at3(f.mixer_tensor("w_uk"), h0 + h, j, 1))
              << "tp " << tp << " head " << h;
          ASSERT_EQ(at3(s.mixer_tensor("w_uv"), h, j % v, 2), at3(f.mixer_tensor("w_uv"), h0 + h, j % v, 2))
              << "tp " << tp << " head " << h;
        }
      const int64_t qk = nope + a.head_dim;
      EXPECT_EQ(at2(s.mixer_tensor("q_b_w"), 0, 5), at2(f.mixer_tensor("q_b_w"), h0 * qk, 5));
      EXPECT_EQ(at2(s.mixer_tensor("o_w"), 2, 0), at2(f.mixer_tensor("o_w"), 2, h0 * v));
      EXPECT_EQ(at2(s.mixer_tensor("kv_a_w"), 7, 3), at2(f.mixer_tensor("kv_a_w"), 7, 3))
          << "the compressed KV is replicated";
      for (size_t l = 0; l < 2; ++l) {  // layer 0 dense, layer 1 MoE
        ModelWeights one;
        one.layers.push_back(part.layers[l]);
        int64_t made = 0;
        for (const auto& [name, t] : one.named_tensors()) made += t.numel();
        EXPECT_EQ(made, spec::layer_parameters_per_rank(a, static_cast<int64_t>(l), tp))
            << "tp " << tp << " layer " << l;
      }
    }
  }
}

// One rank's DeepSeek-V3 (tiny) model with random weights over `batch` sequences.
struct Fixture : test_support::OneRankModel {
  Fixture(int64_t batch, int64_t positions) : OneRankModel("deepseek-v3", batch, positions) {}
};
using test_support::rel_l2;
using test_support::tokens;

TEST(MlaModel, PrefillThenDecodeStepsEqualOneLongerPrefill) {
  const int64_t batch = 3, prompt = 7, steps = 3;
  Fixture whole(batch, prompt + steps);
  const Tensor want = whole.model->step(tokens(batch, prompt + steps, 0), prompt + steps, 0);
  ASSERT_EQ(want.shape(), (Shape{batch, whole.arch.vocab_size}));
  Fixture split(batch, prompt + steps);
  Tensor got = split.model->step(tokens(batch, prompt, 0), prompt, 0);
  for (int64_t j = 0; j < steps; ++j) got = split.model->step(tokens(batch, 1, prompt + j), 1, prompt + j);
  EXPECT_LT(rel_l2(got, want), 1e-5) << "the latent cache carries each sequence";
  // Without the cached tokens (a fresh model decoding the last token alone) it differs.
  Fixture fresh(batch, prompt + steps);
  EXPECT_GT(rel_l2(fresh.model->step(tokens(batch, 1, prompt + steps - 1), 1, 0), want), 1e-2);
}

// The model runs MLA's ops and the grouped router, never the standard attention's.
TEST(MlaModel, RunsLatentAttentionAndTheGroupedRouter) {
  ModelStageConfig c = test_support::tiny_stage("deepseek-v3", 2, 6, 1, 3);
  const ModelStageOutput out = model_stage_run(c);
  std::set<std::string> ops;
  for (const auto& r : out.instances) ops.insert(r.op + ":" + r.role);
  for (const char* want : {"mla_cache_write:attn.mla_cache_write", "mla_attention:attn.mla_attention",
                           "head_linear:attn.q_absorb", "head_linear:attn.v_up", "grouped_topk:moe.topk",
                           "rms_norm:attn.q_a_norm", "rms_norm:attn.kv_a_norm", "fused_moe:moe.experts"})
    EXPECT_TRUE(ops.count(want)) << want;
  for (const char* absent : {"attention:attn.attention", "kv_cache_write:attn.kv_cache_write", "topk_softmax:moe.topk"})
    EXPECT_FALSE(ops.count(absent)) << absent;
}

}  // namespace
}  // namespace fk::runner
