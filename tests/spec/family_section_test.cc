// A model family's own section (core/spec/family_section.h) is an addition in the
// family's files: this test defines a family, "toy", with a section `toy_mixer:` here
// and nowhere else, registers it (its own binary, so the shipped families' tests never
// see it), and checks that the spec loader, the YAML writer, the JSON form and the
// limit checks all serve it through its codec: errors at file:line, presets that
// change its sizes but not its structure, round trips, and architectures that carry a
// section their family does not take are refused.
#include "core/error.h"
#include "core/spec/architecture_write.h"
#include "core/spec/family.h"
#include "core/spec/json_io.h"
#include "core/spec/memory.h"
#include "core/spec/spec_file.h"
#include "core/spec/yaml_reader.h"
#include "spec/spec_test_util.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace fk::spec {
namespace {

struct ToyMixer {
  static constexpr const char* kKey = "toy_mixer";
  int64_t width = 0;
  bool gated = false;
  bool operator==(const ToyMixer&) const = default;
};

constexpr IntRange kToyWidth{1, 4096};

SectionCodec toy_codec() {
  SectionCodec c;
  c.key = ToyMixer::kKey;
  c.required = true;
  c.read = [](MapReader& r, Architecture& a) {
    ToyMixer& m = a.sections.edit<ToyMixer>();
    r.integer("width", m.width, Need::kRequired, kToyWidth);
    r.boolean("gated", m.gated, Need::kOptional);
  };
  c.check_limits = [](const Architecture& a, const ParseContext& ctx) {
    return ctx.check_range("toy_mixer.width", a.sections.get<ToyMixer>().width, kToyWidth);
  };
  c.write_yaml = [](YAML::Emitter& e, const Architecture& a) {
    const ToyMixer& m = a.sections.get<ToyMixer>();
    e << YAML::Key << ToyMixer::kKey << YAML::Value << YAML::Flow << YAML::BeginMap;
    e << YAML::Key << "width" << YAML::Value << static_cast<long long>(m.width);
    e << YAML::Key << "gated" << YAML::Value << m.gated;
    e << YAML::EndMap;
  };
  c.to_json = [](const Architecture& a) {
    const ToyMixer& m = a.sections.get<ToyMixer>();
    return Json{{"width", m.width}, {"gated", m.gated}};
  };
  c.from_json = [](const JsonIn& in, Architecture& a) {
    ToyMixer& m = a.sections.edit<ToyMixer>();
    m.width = in.at("width").i64();
    m.gated = in.at("gated").boolean();
  };
  c.structure = [](const Architecture& a) {
    return std::vector<std::string>{fmt::format("toy_mixer.gated={}", a.sections.get<ToyMixer>().gated)};
  };
  return c;
}

void register_toy() {
  static const bool once = [] {
    register_builtin_families();
    FamilyRules f;
    f.name = "toy";
    f.summary = "a test family with a section of its own";
    f.sections = {toy_codec()};
    f.layout_misfits = [](const Architecture&, const Workload&, const Layout&) { return std::vector<std::string>{}; };
    f.memory_estimate = [](const Architecture& a, const Workload&, const Layout&, DeviceKind) {
      MemoryEstimate m;
      m.parameters = a.sections.get<ToyMixer>().width * a.hidden_size;
      m.weights_bytes = 4 * m.parameters;
      return m;
    };
    f.category = [](const Architecture&) { return FastKernelsCategory::kWorldModel; };
    FamilyRegistry::global().add(std::move(f));
    return true;
  }();
  (void)once;
}

const char* kToyFile = R"(kind: architecture
name: toy-1
model_type: toy
family: toy
model_family: toy
source: a test
hidden_size: 64
num_hidden_layers: 2
vocab_size: 100
norm: {kind: rmsnorm, eps: 1.0e-6}
toy_mixer: {width: 32, gated: true}
presets:
  tiny: {hidden_size: 16, toy_mixer: {width: 8}}
)";

using testing::replaced;
std::string load_errors(const std::string& text) { return testing::load_errors(text, "toy.yaml"); }

TEST(FamilySections, CopiesShareUntilOneIsEditedAndCompareByValue) {
  Architecture a;
  EXPECT_EQ(a.sections.find<ToyMixer>(), nullptr);
  try {
    (void)a.sections.get<ToyMixer>();
    FAIL() << "get() of a missing section returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find("'toy_mixer'"), std::string::npos) << e.what();
  }
  a.sections.edit<ToyMixer>().width = 5;
  Architecture b = a;
  EXPECT_EQ(a, b);
  b.sections.edit<ToyMixer>().width = 6;
  EXPECT_EQ(a.sections.get<ToyMixer>().width, 5) << "editing a copy left the original alone";
  EXPECT_NE(a, b);
  b.sections.edit<ToyMixer>().width = 5;
  EXPECT_EQ(a, b);
  b.sections.erase(ToyMixer::kKey);
  EXPECT_NE(a, b);
}

TEST(FamilySections, AFamilysOwnSectionLoadsWritesAndRoundTripsThroughItsCodec) {
  register_toy();
  Diagnostics d;
  const auto doc = spec_load_string(kToyFile, "toy.yaml", d);
  ASSERT_TRUE(doc.has_value()) << d.to_string();
  const ArchitectureDoc& ad = std::get<ArchitectureDoc>(*doc);
  EXPECT_EQ(ad.full.sections.get<ToyMixer>().width, 32);
  const Architecture tiny = *ad.select("tiny");
  EXPECT_EQ(tiny.sections.get<ToyMixer>().width, 8);
  EXPECT_TRUE(tiny.sections.get<ToyMixer>().gated) << "a preset keeps the section's fields it does not give";
  EXPECT_EQ(ad.full.sections.get<ToyMixer>().width, 32)
      << "the preset's overlay did not write through to the full model";

  const std::string yaml = architecture_to_yaml(tiny);
  EXPECT_NE(yaml.find("toy_mixer: {width: 8, gated: true}"), std::string::npos) << yaml;
  Diagnostics d2;
  const auto back = spec_load_string(yaml, "written.yaml", d2);
  ASSERT_TRUE(back.has_value()) << d2.to_string() << yaml;
  Architecture again = std::get<ArchitectureDoc>(*back).full;
  again.preset = tiny.preset;
  EXPECT_EQ(again, tiny);

  const Json j = to_json(tiny);
  EXPECT_EQ(j.at("toy_mixer"), (Json{{"width", 8}, {"gated", true}})) << j.dump();
  EXPECT_EQ(architecture_from_json(j, "/arch"), tiny);
  EXPECT_EQ(memory_estimate(tiny, Workload{}, Layout{}, DeviceKind::kCpu).parameters, 8 * 16);
  EXPECT_EQ(fastkernels_category_of(tiny), "World models");
}

TEST(FamilySections, MistakesInTheSectionAreErrorsAtTheirLine) {
  register_toy();
  std::string e = load_errors(replaced(kToyFile, "toy_mixer: {width: 32, gated: true}\n", ""));
  EXPECT_NE(e.find("toy_mixer"), std::string::npos) << e;
  EXPECT_NE(e.find("required section is missing"), std::string::npos) << e;
  e = load_errors(replaced(kToyFile, "{width: 32, gated: true}", "{width: 99999, gated: true}"));
  EXPECT_NE(e.find("toy.yaml:11"), std::string::npos) << e;
  EXPECT_NE(e.find("toy_mixer.width"), std::string::npos) << e;
  e = load_errors(replaced(kToyFile, "{width: 32, gated: true}", "{width: 32, gated: true, depth: 3}"));
  EXPECT_NE(e.find("toy_mixer.depth"), std::string::npos) << e;
  // A preset may change the section's sizes, not its structure.
  e = load_errors(replaced(kToyFile, "toy_mixer: {width: 8}", "toy_mixer: {width: 8, gated: false}"));
  EXPECT_NE(e.find("changes the structure of the full model"), std::string::npos) << e;
  EXPECT_NE(e.find("toy_mixer.gated"), std::string::npos) << e;
  // Another family's section is not taken, and this family does not take others'.
  e = load_errors(
      replaced(kToyFile, "vocab_size: 100\n", "vocab_size: 100\nssm: {state_size: 16, time_step_rank: 8}\n"));
  EXPECT_NE(e.find("ssm: does not apply to model_family 'toy'"), std::string::npos) << e;
  e = load_errors(replaced(replaced(kToyFile, "model_family: toy", "model_family: mamba"), "toy_mixer: {width: 8}",
                           "intermediate_size: 32"));
  EXPECT_NE(e.find("toy_mixer: does not apply to model_family 'mamba'"), std::string::npos) << e;
}

TEST(FamilySections, ValuesFromOtherSourcesMeetTheSameRules) {
  register_toy();
  Diagnostics d;
  const auto doc = spec_load_string(kToyFile, "toy.yaml", d);
  ASSERT_TRUE(doc.has_value()) << d.to_string();
  const Architecture a = std::get<ArchitectureDoc>(*doc).full;
  auto json_error = [](const Json& j) {
    try {
      architecture_from_json(j, "/jobs/0/architecture");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Json j = to_json(a);
  j["toy_mixer"]["width"] = 0;
  EXPECT_NE(json_error(j).find("/jobs/0/architecture/toy_mixer/width: 0 is out of range"), std::string::npos)
      << json_error(j);
  j = to_json(a);
  j.erase("toy_mixer");
  EXPECT_NE(json_error(j).find("required section is missing"), std::string::npos) << json_error(j);
  j = to_json(a);
  j["toy_mixer"]["gated"] = "yes";
  EXPECT_NE(json_error(j).find("/toy_mixer/gated"), std::string::npos) << json_error(j);
  // An architecture built in code (an HF import) with a section its family lacks.
  Architecture wrong = a;
  wrong.model_family = "transformer";
  wrong.num_attention_heads = 4;
  wrong.num_key_value_heads = 4;
  wrong.head_dim = 16;
  wrong.intermediate_size = 128;
  wrong.max_position_embeddings = 128;
  Diagnostics d2;
  SourceMap where("code");
  architecture_validate(wrong, ParseContext{"code", &d2, &where, ""});
  EXPECT_NE(d2.to_string().find("toy_mixer: does not apply to model_family 'transformer'"), std::string::npos)
      << d2.to_string();
}

TEST(FamilySections, ARegisteredSectionNeedsEveryFunctionAndAKeyOfItsOwn) {
  auto refusal = [](FamilyRules f) {
    try {
      FamilyRegistry r;
      r.add(std::move(f));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  FamilyRules f;
  f.name = "toy2";
  f.layout_misfits = [](const Architecture&, const Workload&, const Layout&) { return std::vector<std::string>{}; };
  f.memory_estimate = [](const Architecture&, const Workload&, const Layout&, DeviceKind) { return MemoryEstimate{}; };
  f.category = [](const Architecture&) { return FastKernelsCategory::kWorldModel; };
  f.sections = {toy_codec()};
  EXPECT_EQ(refusal(f), "");
  f.sections[0].to_json = nullptr;
  EXPECT_NE(refusal(f).find("section 'toy_mixer' lacks a key or a function"), std::string::npos) << refusal(f);
  f.sections = {toy_codec()};
  f.sections[0].key = "norm";
  EXPECT_NE(refusal(f).find("section 'norm' is a common field"), std::string::npos) << refusal(f);
  f.sections = {toy_codec()};
  f.fields = {{"toy_mixer", false}};
  EXPECT_NE(refusal(f).find("'toy_mixer' is both a field and a section"), std::string::npos) << refusal(f);
}

}  // namespace
}  // namespace fk::spec
