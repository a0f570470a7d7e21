// The runner side of the model-family seam (runner/model/family.h): build_model() is
// the door the model stage and its shape pass go through, a registered family is
// what they run, and an unknown family is a clear error.
#include "core/error.h"
#include "core/spec/family.h"
#include "kernels/backends.h"
#include "model_fixtures.h"
#include "runner/model/family.h"
#include "runner/model/transformer/transformer.h"
#include "runner/model_stage.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <utility>

namespace fk::runner {
namespace {

using test_support::tiny;

std::atomic<int> g_built{0}, g_steps{0};

// The transformer behind a counter: a family of its own as far as the registries know
// (its weights are the transformer's).
class CountingModel final : public Model {
 public:
  explicit CountingModel(const ModelInputs& in)
      : inner_(in.arch, in.workload, in.placement, in.comms, dynamic_cast<const ModelWeights&>(in.weights),
               in.runtime) {}
  void set_layer_hook(LayerHook hook) override { inner_.set_layer_hook(std::move(hook)); }
  void set_trace_last_rows(bool last) override { inner_.set_trace_last_rows(last); }
  void set_all_logits(bool all) override { inner_.set_all_logits(all); }
  void reset() override { inner_.reset(); }
  Tensor step(const Tensor& tokens, int64_t q_len, int64_t q_start) override {
    ++g_steps;
    return inner_.step(tokens, q_len, q_start);
  }

 private:
  Transformer inner_;
};

std::unique_ptr<Model> build_counting(const ModelInputs& in) {
  ++g_built;
  return std::make_unique<CountingModel>(in);
}

// The transformer's plan without its last decode step: the plan is the family's.
std::vector<ModelStep> all_but_last_step(const spec::Architecture& a, const spec::Workload& w) {
  std::vector<ModelStep> steps = ModelFamilyRegistry::global().family("transformer").steps(a, w);
  if (steps.size() > 1) steps.pop_back();
  return steps;
}

std::vector<ModelStep> bad_plan(const spec::Architecture&, const spec::Workload& w) {
  return {{"prefill", w.seq_len, 0}, {"chunk", 4, w.seq_len}};
}

// The transformer's weights, a counting model, and a plan of its own.
ModelFamily counting_family() {
  register_builtin_model_families();
  ModelFamily f = ModelFamilyRegistry::global().family("transformer");
  f.name = "test-counting";
  f.build = build_counting;
  f.steps = all_but_last_step;
  return f;
}

void register_counting_family() {
  static const bool once = [] {
    spec::register_builtin_families();
    spec::FamilyRules rules = spec::FamilyRegistry::global().rules("transformer");
    rules.name = "test-counting";
    spec::FamilyRegistry::global().add(rules);
    ModelFamily family = counting_family();
    ModelFamilyRegistry::global().add(family);
    rules.name = family.name = "test-bad-plan";
    family.steps = bad_plan;
    spec::FamilyRegistry::global().add(rules);
    ModelFamilyRegistry::global().add(family);
    rules.name = family.name = "test-features";
    family.steps = ModelFamilyRegistry::global().family("transformer").steps;
    family.output = [](const spec::Architecture& a) { return ModelOutput{OutputKind::kFeatures, a.hidden_size}; };
    spec::FamilyRegistry::global().add(rules);
    ModelFamilyRegistry::global().add(family);
    return true;
  }();
  (void)once;
}

// The kind and message of the fk::Error `f` throws; a test failure when it throws none.
template <typename F>
std::pair<ErrorKind, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  ADD_FAILURE() << "no fk::Error";
  return {ErrorKind::kInternal, ""};
}

ModelStageConfig small_stage(const std::string& family) {
  ModelStageConfig c;
  c.arch = tiny("llama-3.1-8b");
  c.arch.model_family = family;
  c.workload.name = "w";
  c.workload.batch = 2;
  c.workload.seq_len = 6;
  c.workload.decode_steps = 2;
  c.seed = 4;
  return c;
}

TEST(ModelFamily, TheModelStageRunsTheArchitecturesFamily) {
  register_counting_family();
  const ModelStageOutput plain = model_stage_run(small_stage("transformer"));
  g_built = 0;
  g_steps = 0;
  const ModelStageOutput counted = model_stage_run(small_stage("test-counting"));
  EXPECT_EQ(g_built.load(), 2);      // the fp32 run and the baseline run
  EXPECT_EQ(g_steps.load(), 2 * 2);  // the family's plan: prefill and one decode step, not two
  for (const auto& s : counted.steps) EXPECT_NE(s.step, "decode.1");
  // The same transformer underneath: the same logit statistics, step by step.
  ASSERT_EQ(counted.logits.size() + 1, plain.logits.size());
  for (size_t i = 0; i < counted.logits.size(); ++i) {
    EXPECT_EQ(counted.logits[i].step, plain.logits[i].step);
    EXPECT_EQ(counted.logits[i].top1_match_fp32, plain.logits[i].top1_match_fp32);
    EXPECT_EQ(counted.logits[i].kl_sum_fp32, plain.logits[i].kl_sum_fp32);
  }
  g_built = 0;
  g_steps = 0;
  (void)model_stage_instances(small_stage("test-counting"));
  EXPECT_EQ(g_built.load(), 1);  // the shape pass builds the model once too, and follows the plan
  EXPECT_EQ(g_steps.load(), 2);
}

TEST(ModelFamily, AStepPlanTheStageCannotFeedIsAnError) {
  register_counting_family();
  const auto [kind, what] = error_of([] { (void)model_stage_instances(small_stage("test-bad-plan")); });
  EXPECT_NE(what.find("model family 'test-bad-plan': a step plan opens with the prompt"), std::string::npos) << what;
}

TEST(ModelFamily, FeaturesCannotFeedADecodeStep) {
  register_counting_family();
  const auto [kind, what] = error_of([] { (void)model_stage_instances(small_stage("test-features")); });
  EXPECT_NE(what.find("model family 'test-features': a model without logits has no token to feed step 'decode.0'"),
            std::string::npos)
      << what;
}

TEST(ModelFamily, UnknownFamilyIsNamedWithTheKnownOnes) {
  register_counting_family();
  const auto [kind, what] = error_of([] { (void)model_stage_instances(small_stage("rwkv")); });
  EXPECT_EQ(kind, ErrorKind::kNotFound);
  EXPECT_NE(what.find("no model family in fk-runner named 'rwkv' (known: convnext, mamba, test-bad-plan, test-counting, "
                      "test-features, transformer)"),
            std::string::npos)
      << what;
  ModelFamilyRegistry r;
  ModelFamily f = counting_family();
  f.name = "";
  EXPECT_THROW(r.add(f), Error);
  f.name = "x";
  for (auto missing : {+[](ModelFamily& m) { m.build = nullptr; }, +[](ModelFamily& m) { m.steps = nullptr; },
                       +[](ModelFamily& m) { m.output = nullptr; },
                       +[](ModelFamily& m) { m.master_weights = nullptr; },
                       +[](ModelFamily& m) { m.load_weights = nullptr; },
                       +[](ModelFamily& m) { m.placeholder_weights = nullptr; },
                       +[](ModelFamily& m) { m.checkpoint_names = nullptr; }}) {
    ModelFamily g = f;
    missing(g);
    EXPECT_THROW(r.add(g), Error);
  }
  r.add(f);
  EXPECT_THROW(r.add(f), Error);  // twice
  EXPECT_EQ(r.find("y"), nullptr);
  EXPECT_EQ(r.names(), std::vector<std::string>{"x"});
}

TEST(ModelFamily, TheTransformerRefusesWeightsAnotherFamilyMade) {
  struct Foreign final : Weights {
    int64_t parameter_count() const override { return 0; }
    std::unique_ptr<Weights> rounded(DType) const override { return std::make_unique<Foreign>(); }
    std::vector<std::pair<std::string, Tensor>> named_tensors() const override { return {}; }
  };
  const ModelStageConfig c = small_stage("transformer");
  const auto backend = kernels::backend_create(DeviceKind::kCpu, 0);
  Runtime rt(ImplSet::baseline(DeviceKind::kCpu), *backend);
  const Foreign foreign;
  const auto [kind, what] = error_of([&] { (void)build_model({c.arch, c.workload, c.placement, {}, foreign, rt}); });
  EXPECT_EQ(kind, ErrorKind::kInternal);
  EXPECT_NE(what.find("weights another family made"), std::string::npos) << what;
}

}  // namespace
}  // namespace fk::runner
