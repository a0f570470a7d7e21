// The model stage's streamed reference (model_stage.reference): the fp32 run makes each
// layer's weights when it reaches it, and must then be the resident run bit for bit.
#include "core/error.h"
#include "kernels/backends.h"
#include "model_fixtures.h"
#include "runner/model/family.h"
#include "runner/model/transformer/weights.h"
#include "runner/model_stage.h"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <cstring>

namespace fk::runner {
namespace {

using test_support::tiny;
using test_support::tiny_stage;

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.defined() == b.defined() &&
         (!a.defined() || (a.shape() == b.shape() && a.dtype() == b.dtype() &&
                           std::memcmp(a.contiguous_copy().data(), b.contiguous_copy().data(), a.nbytes()) == 0));
}

// Streamed weights make every layer with load()'s bits, hold the weights outside the
// layers from the start, count every parameter, and keep a layer until another is asked
// for. For a whole model and a TP x PP shard, dense and MoE, fp32 and bf16.
TEST(StreamedReference, LayersAreMadeOnDemandWithTheLoadedBits) {
  const auto cpu = kernels::backend_create(DeviceKind::kCpu, 0);
  const RandomWeights source(5);
  for (const char* name : {"llama-3.1-8b", "qwen3-30b-a3b", "gemma-2-9b", "phi-3-mini"}) {
    const spec::Architecture a = tiny(name);
    for (const Placement& pl : test_support::weight_test_placements()) {
      for (DType dt : {DType::kF32, DType::kBF16}) {
        const std::string what =
            fmt::format("{} tp rank {} pp rank {} {}", name, pl.tp_rank, pl.pp_rank, dtype_name(dt));
        const ModelWeights want = ModelWeights::load(a, pl, source, dt, *cpu);
        const ModelWeights got = ModelWeights::streamed(a, pl, source, dt, *cpu);
        ASSERT_TRUE(got.stream) << what;
        EXPECT_EQ(got.parameter_count(), want.parameter_count()) << what;
        ASSERT_EQ(got.layers.size(), want.layers.size()) << what;
        EXPECT_TRUE(same_bytes(got.embed, want.embed)) << what;
        EXPECT_TRUE(same_bytes(got.lm_head, want.lm_head)) << what;
        EXPECT_TRUE(same_bytes(got.final_norm_w, want.final_norm_w)) << what;
        for (size_t i = 0; i < want.layers.size(); ++i) {
          EXPECT_FALSE(got.layers[i].qkv_w.defined()) << what << ": layer " << i << " is resident";
          const LayerWeights& l = got.layer(i);
          const LayerWeights& w = want.layers[i];
          EXPECT_EQ(l.index, w.index) << what;
          for (auto [g, r, field] : {std::tuple{&l.qkv_w, &w.qkv_w, "qkv_w"},
                                     {&l.o_w, &w.o_w, "o_w"},
                                     {&l.attn_norm_w, &w.attn_norm_w, "attn_norm_w"},
                                     {&l.mlp_norm_w, &w.mlp_norm_w, "mlp_norm_w"},
                                     {&l.up_w, &w.up_w, "up_w"},
                                     {&l.down_w, &w.down_w, "down_w"},
                                     {&l.router_w, &w.router_w, "router_w"},
                                     {&l.w13, &w.w13, "w13"},
                                     {&l.w2, &w.w2, "w2"},
                                     {&l.post_mlp_norm_w, &w.post_mlp_norm_w, "post_mlp_norm_w"}})
            EXPECT_TRUE(same_bytes(*g, *r)) << what << ": layer " << i << " " << field;
          // Asked again, the same layer is not made again.
          EXPECT_EQ(&got.layer(i), &l) << what;
          EXPECT_EQ(got.layer(i).qkv_w.data(), l.qkv_w.data()) << what;
        }
        EXPECT_THROW(got.layer(want.layers.size()), Error) << what;
        EXPECT_THROW(got.to_dtype(DType::kF16), Error) << what;
      }
    }
  }
}

// The model stage with the reference streamed gives what it gives with it resident:
// the same fp32 logits, precision trace and logit statistics, bit for bit (the same
// values, made later), for dense, MoE, sliding-window and parallel-block models.
TEST(StreamedReference, ModelStageMatchesTheResidentRunBitForBit) {
  for (const char* name : {"llama-3.1-8b", "mixtral-8x7b", "gemma-2-9b", "gpt-neox-20b"}) {
    ModelStageConfig c = tiny_stage(name, 2, 8, 2, 11);
    c.record_instances = false;
    c.reference = spec::ReferenceWeights::kResident;
    const ModelStageOutput resident = model_stage_run(c);
    c.reference = spec::ReferenceWeights::kStreamed;
    const ModelStageOutput streamed = model_stage_run(c);
    EXPECT_EQ(resident.reference, spec::ReferenceWeights::kResident) << name;
    EXPECT_EQ(streamed.reference, spec::ReferenceWeights::kStreamed) << name;
    ASSERT_TRUE(streamed.fp32_logits.defined()) << name;
    EXPECT_TRUE(same_bytes(streamed.fp32_logits, resident.fp32_logits)) << name;
    ASSERT_EQ(streamed.layers.size(), resident.layers.size()) << name;
    for (size_t i = 0; i < resident.layers.size(); ++i) {
      const auto &g = streamed.layers[i], &w = resident.layers[i];
      EXPECT_EQ(g.run, w.run);
      EXPECT_EQ(g.step, w.step);
      EXPECT_EQ(g.layer, w.layer);
      EXPECT_EQ(g.err_vs_fp32, w.err_vs_fp32) << name << " " << w.run << " " << w.step << " layer " << w.layer;
      EXPECT_EQ(g.ref_fp32, w.ref_fp32) << name << " " << w.run << " " << w.step << " layer " << w.layer;
    }
    ASSERT_EQ(streamed.logits.size(), resident.logits.size()) << name;
    for (size_t i = 0; i < resident.logits.size(); ++i) {
      EXPECT_EQ(streamed.logits[i].top1_match_fp32, resident.logits[i].top1_match_fp32) << name;
      EXPECT_EQ(streamed.logits[i].kl_sum_fp32, resident.logits[i].kl_sum_fp32) << name;
    }
  }
}

// auto keeps the weights resident unless the resident estimate exceeds 90% of the
// device (a tiny model on this host: resident); streamed is refused, naming why, for a
// family that cannot stream and for an fp32 workload.
TEST(StreamedReference, AutoStreamsOnlyWhatTheDeviceCannotHoldAndBadRequestsNameWhy) {
  EXPECT_FALSE(reference_needs_streaming(90, 100));
  EXPECT_TRUE(reference_needs_streaming(91, 100));
  EXPECT_FALSE(reference_needs_streaming(int64_t{1} << 50, 0));  // unknown device memory
  ModelStageConfig c = tiny_stage("llama-3.1-8b", 1, 4, 1, 2);
  c.record_instances = false;
  EXPECT_EQ(model_stage_run(c).reference, spec::ReferenceWeights::kResident);

  const auto error_of = [](const ModelStageConfig& cfg) -> std::string {
    try {
      model_stage_run(cfg);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  ModelStageConfig mamba = tiny_stage("mamba-2.8b", 1, 4, 1, 2);
  ASSERT_EQ(model_family_of(mamba.arch).streamed_weights, nullptr);
  mamba.reference = spec::ReferenceWeights::kStreamed;
  const std::string m = error_of(mamba);
  EXPECT_NE(m.find("model_stage.reference: streamed"), std::string::npos) << m;
  EXPECT_NE(m.find("'mamba'"), std::string::npos) << m;
  mamba.reference = spec::ReferenceWeights::kAuto;
  EXPECT_EQ(model_stage_run(mamba).reference, spec::ReferenceWeights::kResident);

  // A device too small for the chosen reference's estimate is refused before any weights
  // are made, saying what would fit.
  EXPECT_EQ(model_stage_memory_refusal(100, 100, "cuda:0", spec::ReferenceWeights::kStreamed), "");
  EXPECT_EQ(model_stage_memory_refusal(int64_t{1} << 40, 0, "cuda:0", spec::ReferenceWeights::kResident), "");
  const std::string big =
      model_stage_memory_refusal(int64_t{94} << 30, int64_t{79} << 30, "cuda:0", spec::ReferenceWeights::kStreamed);
  EXPECT_NE(big.find("94.0 GiB"), std::string::npos) << big;
  EXPECT_NE(big.find("cuda:0 has 79.0 GiB"), std::string::npos) << big;
  EXPECT_NE(big.find("more tp or pp"), std::string::npos) << big;
  EXPECT_EQ(big.find("model_stage.reference: streamed"), std::string::npos) << big;
  const std::string resident = model_stage_memory_refusal(101, 100, "cuda:1", spec::ReferenceWeights::kResident);
  EXPECT_NE(resident.find("model_stage.reference: streamed"), std::string::npos) << resident;

  c.workload.dtype = DType::kF32;
  c.reference = spec::ReferenceWeights::kStreamed;
  const std::string f = error_of(c);
  EXPECT_NE(f.find("fp32"), std::string::npos) << f;
  EXPECT_NE(f.find("workload 'w'"), std::string::npos) << f;
}

}  // namespace
}  // namespace fk::runner
