// The transformer's mixers are plug-ins (runner/model/transformer/mixer.h): a kind
// registered here, in this test alone, takes the odd layers of an architecture named
// "toy-hybrid" with no edit of the transformer, its weights or the built-in mixers. The
// model then runs it in those layers and the built-in attention in the others (its ops,
// its KV cache), its tensors are named and rounded as it asks, and a step with a cache
// still agrees with one longer prefill. Two kinds taking one layer, a kind without a
// function and a second default are refused. The built-in Mamba layers (Jamba's
// Mamba-1, Bamba's Mamba-2) keep a state that carries a decode step.
#include "runner/model/transformer/mixer.h"
#include "core/error.h"
#include "core/spec/families/mamba_layers.h"
#include "model_fixtures.h"
#include "runner/model/transformer/weights.h"
#include "runner/model_stage.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

namespace fk::runner {
namespace {

using test_support::tiny;

bool toy_serves(const spec::Architecture& a, int64_t layer) { return a.name == "toy-hybrid" && layer % 2 == 1; }

// toy_w [H, H] (replicated) and toy_scale [H] in fp32 storage.
void toy_weights(const LayerGen& g, int64_t l, LayerWeights& w) {
  const int64_t h = g.a.hidden_size;
  w.add_mixer("toy_w", g.make(g.rows(g.layer_name(l, "mixer.toy.weight"), h, 0, h, h)));
  w.add_mixer("toy_scale", g.make.fp32_in_dtype(g.scale(g.layer_name(l, "mixer.toy.scale"), h)),
              LayerWeights::Storage::kFp32Rounded);
}

// A token-local mixer with a state: out = toy_w x, plus the previous step's last row of
// its sequence (so a decode step depends on what the state kept), on TP rank 0.
class Toy final : public Mixer {
 public:
  explicit Toy(const LayerContext& c) : c_(c) { state_ = c_.rt.zeros(c_.dtype, {c_.batch, c_.arch.hidden_size}); }
  void reset() override { c_.rt.zero(state_); }
  Tensor forward(const LayerWeights& w, const Tensor& x, const MixerStep& st) override {
    Tensor out = c_.linear(x, w.mixer_tensor("toy_w"), Tensor(), "attn.toy");
    const int64_t h = c_.arch.hidden_size;
    for (int64_t s = 0; s < st.seqs; ++s) {
      const Tensor rows = out.slice(0, s * st.q_len, st.q_len);
      const Tensor keep = state_.slice(0, st.seq_begin + s, 1);
      for (int64_t j = 0; j < st.q_len; ++j) {
        const Tensor row = rows.slice(0, j, 1);
        c_.rt.run("add", "attn.toy_state", kernels::OpCall{{row, row, keep}, {}});
        c_.rt.copy_rows(keep, row.reshape({1, h}));
      }
    }
    return out;
  }

 private:
  const LayerContext& c_;
  Tensor state_;  // [batch, H]: each sequence's last output row
};

std::unique_ptr<Mixer> make_toy(const LayerContext& c, int64_t) { return std::make_unique<Toy>(c); }

bool clash_serves(const spec::Architecture& a, int64_t) { return a.name == "toy-clash"; }

// Registers the test's kinds once, at the first test that needs them (not at static
// initialisation: the spec loader's tables may not be made yet).
bool registered() {
  static const bool done = [] {
    mixer_of(tiny("llama-3.1-8b"), 0);  // the built-in kinds first
    MixerKind toy;
    toy.name = "toy";
    toy.serves = toy_serves;
    toy.weights = toy_weights;
    toy.make = make_toy;
    MixerRegistry::global().add(toy);
    for (const char* name : {"clash_a", "clash_b"}) {
      MixerKind k = toy;
      k.name = name;
      k.serves = clash_serves;
      MixerRegistry::global().add(k);
    }
    return true;
  }();
  return done;
}

spec::Architecture hybrid() {
  EXPECT_TRUE(registered());
  spec::Architecture a = tiny("llama-3.1-8b");
  a.name = "toy-hybrid";
  return a;
}

TEST(Mixers, EachLayerRunsTheKindThatTakesItElseTheDefault) {
  const spec::Architecture a = hybrid();
  ASSERT_GE(a.num_hidden_layers, 4);
  for (int64_t l = 0; l < a.num_hidden_layers; ++l)
    EXPECT_EQ(mixer_of(a, l).name, l % 2 ? "toy" : "attention") << "layer " << l;
  EXPECT_EQ(mixer_of(tiny("llama-3.1-8b"), 1).name, "attention");
  EXPECT_EQ(mixer_of(tiny("deepseek-v3"), 1).name, "mla");
}

TEST(Mixers, ALayerHoldsItsKindsTensorsNamedAndRoundedAsTheKindAsks) {
  const spec::Architecture a = hybrid();
  const ModelWeights w = ModelWeights::generate(a, Placement{}, 4);
  EXPECT_TRUE(w.layers[0].qkv_w.defined());
  EXPECT_FALSE(w.layers[0].mixer_tensor("toy_w").defined());
  EXPECT_FALSE(w.layers[1].qkv_w.defined()) << "a toy layer has no attention tensors";
  ASSERT_EQ(w.layers[1].mixer_tensor("toy_w").shape(), (Shape{a.hidden_size, a.hidden_size}));
  std::set<std::string> names;
  for (const auto& [name, t] : w.named_tensors()) names.insert(name);
  EXPECT_TRUE(names.count("layers.1.toy_w"));
  EXPECT_TRUE(names.count("layers.1.toy_scale"));
  EXPECT_FALSE(names.count("layers.0.toy_w"));
  const ModelWeights b = w.to_dtype(DType::kBF16);
  EXPECT_EQ(b.layers[1].mixer_tensor("toy_w").dtype(), DType::kBF16);
  EXPECT_EQ(b.layers[1].mixer_tensor("toy_scale").dtype(), DType::kF32) << "fp32 storage kept";
  // ... holding the bf16-rounded values.
  const float v = w.layers[1].mixer_tensor("toy_scale").data_as<float>()[3];
  float r = v;
  dtype_round_trip(&r, 1, DType::kBF16);
  EXPECT_EQ(b.layers[1].mixer_tensor("toy_scale").data_as<float>()[3], r);
  LayerWeights twice;
  twice.add_mixer("x", Tensor());
  EXPECT_THROW(twice.add_mixer("x", Tensor()), Error);
}

TEST(Mixers, TheModelRunsTheToyInItsLayersAndAttentionInTheOthers) {
  ASSERT_TRUE(registered());
  ModelStageConfig c = test_support::tiny_stage("llama-3.1-8b", 2, 5, 1, 3);
  c.arch.name = "toy-hybrid";
  const ModelStageOutput out = model_stage_run(c);
  std::set<int64_t> toy, cache;
  for (const auto& r : out.instances) {
    if (r.role == "attn.toy") toy.insert(r.layers.begin(), r.layers.end());
    if (r.op == "kv_cache_write") cache.insert(r.layers.begin(), r.layers.end());
  }
  std::set<int64_t> odd, even;
  for (int64_t l = 0; l < c.arch.num_hidden_layers; ++l) (l % 2 ? odd : even).insert(l);
  EXPECT_EQ(toy, odd);
  EXPECT_EQ(cache, even);
}

TEST(Mixers, AStepOnTheKeptStateEqualsOneLongerPrefill) {
  ASSERT_TRUE(registered());
  const int64_t batch = 2, prompt = 5;
  // OneRankModel builds by name; the same model under the hybrid's name.
  struct Hybrid : test_support::OneRankModel {
    Hybrid() : OneRankModel("llama-3.1-8b", 2, 6) {
      arch.name = "toy-hybrid";
      const ModelFamily& f = model_family_of(arch);
      weights = f.master_weights(arch, placement, RandomWeights(9));
      model = f.build({arch, workload, placement, {}, *weights, *rt});
    }
  };
  Hybrid whole;
  const Tensor want = whole.model->step(test_support::tokens(batch, prompt + 1, 0), prompt + 1, 0);
  Hybrid split;
  split.model->step(test_support::tokens(batch, prompt, 0), prompt, 0);
  const Tensor got = split.model->step(test_support::tokens(batch, 1, prompt), 1, prompt);
  EXPECT_LT(test_support::rel_l2(got, want), 1e-5);
  // reset() forgets the toy's state too: the decode step alone then differs.
  split.model->reset();
  const Tensor fresh = split.model->step(test_support::tokens(batch, 1, prompt), 1, prompt);
  EXPECT_GT(test_support::rel_l2(fresh, want), 1e-3);
}

// Jamba (a built-in kind): its tiny preset's layer 4 keeps attention and a KV cache, the
// others run the Mamba mixer on a recurrent state.
TEST(Mixers, JambaRunsItsMambaLayersOnAStateThatCarriesADecodeStep) {
  const spec::Architecture a = tiny("jamba-v0.1");
  for (int64_t l = 0; l < a.num_hidden_layers; ++l)
    EXPECT_EQ(mixer_of(a, l).name, l == 4 ? "attention" : "mamba") << "layer " << l;
  const ModelStageOutput out = model_stage_run(test_support::tiny_stage("jamba-v0.1", 2, 5, 1, 3));
  std::set<int64_t> scan, cache, inner_norm;
  for (const auto& r : out.instances) {
    if (r.op == "selective_scan") scan.insert(r.layers.begin(), r.layers.end());
    if (r.op == "kv_cache_write") cache.insert(r.layers.begin(), r.layers.end());
    if (r.role == "mixer.dt_norm") inner_norm.insert(r.layers.begin(), r.layers.end());
  }
  EXPECT_EQ(cache, (std::set<int64_t>{4}));
  EXPECT_EQ(scan, (std::set<int64_t>{0, 1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(inner_norm, scan);

  const int64_t batch = 2, prompt = 5;
  test_support::OneRankModel whole("jamba-v0.1", batch, prompt + 1);
  const Tensor want = whole.model->step(test_support::tokens(batch, prompt + 1, 0), prompt + 1, 0);
  test_support::OneRankModel split("jamba-v0.1", batch, prompt + 1);
  const Tensor first = split.model->step(test_support::tokens(batch, prompt, 0), prompt, 0);
  const Tensor got = split.model->step(test_support::tokens(batch, 1, prompt), 1, prompt);
  EXPECT_LT(test_support::rel_l2(got, want), 1e-5);
  // A new prompt at position 0 starts from zero state, without reset(), as attention's
  // cache is overwritten.
  const Tensor again = split.model->step(test_support::tokens(batch, prompt, 0), prompt, 0);
  EXPECT_LT(test_support::rel_l2(again, first), 1e-6);
  // reset() forgets the states: the decode step alone then differs.
  split.model->reset();
  const Tensor fresh = split.model->step(test_support::tokens(batch, 1, prompt), 1, prompt);
  EXPECT_GT(test_support::rel_l2(fresh, want), 1e-3);
}

// The same hybrid with Mamba-2 layers (the `mamba:` section's version 2, as Bamba's):
// the SSD scan on its own state, split over TP by heads and groups.
TEST(Mixers, Mamba2LayersRunTheSsdScanOnAStateThatCarriesADecodeStep) {
  const auto mamba2 = [](spec::Architecture& a) {
    spec::MambaLayersSpec& m = a.sections.edit<spec::MambaLayersSpec>();
    m.version = 2;
    m.inner_norms = false;
    m.num_heads = 8;
    m.head_dim = m.inner_size / 8;
    m.n_groups = 2;
  };
  struct Bamba : test_support::OneRankModel {
    explicit Bamba(const std::function<void(spec::Architecture&)>& edit, int64_t batch, int64_t positions)
        : OneRankModel("jamba-v0.1", batch, positions) {
      edit(arch);
      const ModelFamily& f = model_family_of(arch);
      weights = f.master_weights(arch, placement, RandomWeights(9));
      model = f.build({arch, workload, placement, {}, *weights, *rt});
    }
  };
  ModelStageConfig c = test_support::tiny_stage("jamba-v0.1", 2, 5, 1, 3);
  mamba2(c.arch);
  const ModelStageOutput out = model_stage_run(c);
  std::set<int64_t> scan;
  for (const auto& r : out.instances) {
    EXPECT_NE(r.op, "selective_scan");
    if (r.op == "ssd_scan") scan.insert(r.layers.begin(), r.layers.end());
  }
  EXPECT_EQ(scan, (std::set<int64_t>{0, 1, 2, 3, 5, 6, 7}));

  const int64_t batch = 2, prompt = 5;
  Bamba whole(mamba2, batch, prompt + 1);
  const Tensor want = whole.model->step(test_support::tokens(batch, prompt + 1, 0), prompt + 1, 0);
  Bamba split(mamba2, batch, prompt + 1);
  split.model->step(test_support::tokens(batch, prompt, 0), prompt, 0);
  const Tensor got = split.model->step(test_support::tokens(batch, 1, prompt), 1, prompt);
  EXPECT_LT(test_support::rel_l2(got, want), 1e-5);
  split.model->reset();
  const Tensor fresh = split.model->step(test_support::tokens(batch, 1, prompt), 1, prompt);
  EXPECT_GT(test_support::rel_l2(fresh, want), 1e-3);
}

TEST(Mixers, TwoKindsTakingOneLayerAndIncompleteKindsAreRefused) {
  ASSERT_TRUE(registered());
  spec::Architecture a = tiny("llama-3.1-8b");
  a.name = "toy-clash";
  try {
    mixer_of(a, 0);
    FAIL() << "two kinds took layer 0";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find("clash_a"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("clash_b"), std::string::npos) << e.what();
  }
  MixerRegistry r;
  MixerKind k;
  k.name = "half";
  k.serves = toy_serves;
  k.weights = toy_weights;
  EXPECT_THROW(r.add(k), Error) << "no make function";
  k.make = make_toy;
  k.is_default = true;
  r.add(k);
  k.name = "other";
  try {
    r.add(k);
    FAIL() << "a second default was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("both the default"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fk::runner
