// The spec side of the model-family seam (core/spec/family.h): the registry's errors,
// and layout_misfits / memory_estimate reaching the architecture's family.
#include "core/error.h"
#include "core/spec/family.h"

#include <gtest/gtest.h>

namespace fk::spec {
namespace {

std::vector<std::string> never_tp2(const Architecture&, const Workload&, const Layout& l) {
  if (l.tp == 2) return {"this family never runs at tp 2"};
  return {};
}

MemoryEstimate fixed_memory(const Architecture&, const Workload&, const Layout& l, DeviceKind backend) {
  MemoryEstimate m;
  m.parameters = 100 * l.tp + (backend == DeviceKind::kCuda ? 1 : 0);
  m.weights_bytes = 1000;
  m.kv_cache_bytes = 20;
  m.activation_bytes = 3;
  return m;
}

// A second family, registered once in the global registry the way a shipped one is.
const FamilyRules& test_family() {
  static const bool added = [] {
    register_builtin_families();
    FamilyRules f;
    f.name = "test-fixed";
    f.summary = "fixed answers for the seam's tests";
    f.layout_misfits = never_tp2;
    f.memory_estimate = fixed_memory;
    f.category = [](const Architecture&) { return FastKernelsCategory::kWorldModel; };
    FamilyRegistry::global().add(std::move(f));
    return true;
  }();
  (void)added;
  return FamilyRegistry::global().rules("test-fixed");
}

Architecture tiny_transformer() {
  Architecture a;
  a.name = "t";
  a.hidden_size = 64;
  a.num_hidden_layers = 2;
  a.num_attention_heads = 4;
  a.num_key_value_heads = 2;
  a.head_dim = 16;
  a.intermediate_size = 128;
  a.vocab_size = 256;
  a.max_position_embeddings = 64;
  return a;
}

Workload small_prefill() {
  Workload w;
  w.name = "w";
  w.batch = 3;
  w.seq_len = 8;
  return w;
}

TEST(ModelFamilies, ShippedFamilyIsTheDefault) {
  register_builtin_families();
  EXPECT_EQ(Architecture{}.model_family, "transformer");
  EXPECT_NE(FamilyRegistry::global().find("transformer"), nullptr);
  EXPECT_EQ(&family_rules(tiny_transformer()), FamilyRegistry::global().find("transformer"));
}

TEST(ModelFamilies, LayoutsAndMemoryGoToTheArchitecturesFamily) {
  test_family();
  Architecture a = tiny_transformer();
  const Workload w = small_prefill();
  // tp 3 does not divide the transformer's 4 heads; dp 2 does not divide the batch of 3.
  const auto t = layout_misfits(a, w, {3, 1, 2});
  EXPECT_EQ(t.size(), 4u);  // heads, kv heads, intermediate size, batch
  a.model_family = "test-fixed";
  const auto f = layout_misfits(a, w, {3, 1, 2});
  ASSERT_EQ(f.size(), 1u);  // only the generic dp check: the family has no opinion on tp 3
  EXPECT_NE(f[0].find("dp (2) does not divide the batch (3)"), std::string::npos);
  const auto f2 = layout_misfits(a, w, {2, 1, 1});
  ASSERT_EQ(f2.size(), 1u);
  EXPECT_EQ(f2[0], "this family never runs at tp 2");
  const MemoryEstimate m = memory_estimate(a, w, {2, 1, 1}, DeviceKind::kCpu);
  EXPECT_EQ(m.parameters, 200);
  EXPECT_EQ(m.total(), 1023);
  EXPECT_EQ(memory_estimate(a, w, {2, 1, 1}, DeviceKind::kCuda).parameters, 201);  // the backend reaches the family
}

TEST(ModelFamilies, EachArchitectureHasAFastKernelsCategory) {
  test_family();
  ASSERT_EQ(fastkernels_categories().size(), 8u);
  EXPECT_EQ(fastkernels_category_name(fastkernels_categories().front()), "Dense & MoE LLMs");
  EXPECT_EQ(fastkernels_category_name(fastkernels_categories().back()), "World models");
  Architecture a = tiny_transformer();
  EXPECT_EQ(fastkernels_category_of(a), "Dense & MoE LLMs");
  a.head.kind = HeadKind::kNone;  // a text encoder, as the benchmark's bge-m3 and ColBERT
  EXPECT_EQ(fastkernels_category_of(a), "Recsys & specialized");
  a.model_family = "mamba";
  EXPECT_EQ(fastkernels_category_of(a), "Linear attention & SSM");
  a.model_family = "test-fixed";
  EXPECT_EQ(fastkernels_category_of(a), "World models");
  a.model_family = "rwkv";
  EXPECT_EQ(fastkernels_category_of(a), "") << "a family this program does not have";
}

TEST(ModelFamilies, RegistryErrorsNameWhatIsWrong) {
  test_family();
  Architecture a = tiny_transformer();
  a.model_family = "rwkv";
  try {
    (void)family_rules(a);
    FAIL() << "no error for an unknown family";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("no model family named 'rwkv' (known: convnext, mamba, test-fixed, transformer)"),
              std::string::npos)
        << e.what();
  }
  FamilyRegistry r;
  FamilyRules nameless;
  nameless.layout_misfits = never_tp2;
  nameless.memory_estimate = fixed_memory;
  nameless.category = [](const Architecture&) { return FastKernelsCategory::kEdgeDetection; };
  EXPECT_THROW(r.add(nameless), Error);
  FamilyRules no_memory;
  no_memory.name = "x";
  no_memory.layout_misfits = never_tp2;
  no_memory.category = nameless.category;
  EXPECT_THROW(r.add(no_memory), Error);
  FamilyRules no_category = nameless;
  no_category.name = "x";
  no_category.category = nullptr;
  try {
    r.add(no_category);
    FAIL() << "a family without a category was added";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model family 'x' lacks category"), std::string::npos) << e.what();
  }
  FamilyRules ok = nameless;
  ok.name = "x";
  r.add(ok);
  EXPECT_THROW(r.add(ok), Error);  // twice
  EXPECT_EQ(r.names(), std::vector<std::string>{"x"});
}

}  // namespace
}  // namespace fk::spec
