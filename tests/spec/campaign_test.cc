// Workloads, layouts and campaigns: parsing, resolution and every fit rule.
#include "core/spec/spec_file.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fk::testing {
namespace {

using spec::Layout;

const char* kWorkload =
    "kind: workload\n"
    "name: w\n"
    "phase: prefill\n"
    "batch: 4\n"
    "seq_len: 64\n"
    "decode_steps: 2\n"
    "presets:\n"
    "  tiny: {batch: 2, seq_len: 8}\n";

bool has_error(const spec::Diagnostics& d, const std::string& field, const std::string& msg) {
  for (const auto& i : d.items())
    if (i.field == field && i.message.find(msg) != std::string::npos) return true;
  return false;
}

TEST(Workload, ParsesWithPreset) {
  spec::Diagnostics diags;
  auto s = spec::spec_load_string(kWorkload, "w.yaml", diags);
  ASSERT_TRUE(diags.ok()) << diags.to_string();
  const auto& doc = std::get<spec::WorkloadDoc>(*s);
  EXPECT_EQ(doc.full.batch, 4);
  EXPECT_EQ(doc.select("tiny")->batch, 2);
  EXPECT_EQ(doc.select("tiny")->decode_steps, 2);
  EXPECT_EQ(doc.full.max_positions(), 66);
}

TEST(Workload, Rules) {
  struct R { const char* from; const char* to; const char* field; const char* msg; };
  for (const R& r : std::vector<R>{
           {"phase: prefill", "phase: prefil", "phase", "did you mean 'prefill'?"},
           {"batch: 4", "batch: 0", "batch", "0 is out of range"},
           {"phase: prefill", "phase: decode\ndecode_stepz: 1", "decode_stepz", "did you mean 'decode_steps'?"},
           {"decode_steps: 2", "decode_steps: 0\nphase: decode", "phase", "duplicate key"},
           {"seq_len: 64", "seq_len: 64\ndtype: fp8", "dtype", "'fp8' is not one of [fp32, fp16, bf16]"},
       }) {
    const std::string text = replace_line(kWorkload, r.from, r.to);
    const auto d = parse_errors(text);
    EXPECT_TRUE(has_error(d, r.field, r.msg)) << r.to << "\n" << d.to_string();
  }
  const std::string decode_no_steps = replace_line(replace_line(kWorkload, "phase: prefill", "phase: decode"),
                                                   "decode_steps: 2", "decode_steps: 0");
  EXPECT_TRUE(has_error(parse_errors(decode_no_steps), "decode_steps", "a decode workload needs decode_steps >= 1"));
}

TEST(Layout, ParsesNames) {
  EXPECT_EQ(spec::layout_parse("tp2"), (Layout{2, 1, 1}));
  EXPECT_EQ(spec::layout_parse("tp2pp4"), (Layout{2, 4, 1}));
  EXPECT_EQ(spec::layout_parse("pp2tp2dp2"), (Layout{2, 2, 2}));
  EXPECT_EQ(spec::layout_parse("dp3"), (Layout{1, 1, 3}));
  for (const char* bad : {"", "tp", "tp0", "tp2tp2", "xp2", "tp2 pp2", "tp-1"})
    EXPECT_FALSE(spec::layout_parse(bad).has_value()) << bad;
  EXPECT_EQ((Layout{2, 2, 1}).name(), "tp2pp2dp1");
  EXPECT_EQ((Layout{2, 2, 3}).ranks(), 12);
}

spec::Architecture small_arch() {
  spec::Architecture a;
  a.name = "a";
  a.hidden_size = 96;
  a.num_hidden_layers = 4;
  a.num_attention_heads = 6;
  a.num_key_value_heads = 3;
  a.head_dim = 16;
  a.intermediate_size = 240;
  a.vocab_size = 1000;
  a.max_position_embeddings = 128;
  return a;
}

TEST(Layout, EveryFitRule) {
  spec::Workload w;
  w.batch = 6;
  w.seq_len = 100;
  w.decode_steps = 4;
  auto misfit = [&](const spec::Architecture& a, Layout l, const std::string& needle) {
    const auto m = spec::layout_misfits(a, w, l);
    bool found = false;
    for (const auto& s : m) found |= s.find(needle) != std::string::npos;
    EXPECT_TRUE(found) << l.name() << " should fail with '" << needle << "'";
  };
  const auto a = small_arch();
  EXPECT_TRUE(spec::layout_misfits(a, w, {1, 1, 1}).empty());
  EXPECT_TRUE(spec::layout_misfits(a, w, {3, 1, 1}).empty());      // kv 3 divided by 3
  EXPECT_TRUE(spec::layout_misfits(a, w, {1, 4, 2}).empty());      // pp = layers, dp divides batch
  misfit(a, {4, 1, 1}, "tp (4) does not divide num_attention_heads (6)");
  misfit(a, {2, 1, 1}, "num_key_value_heads (3) can be neither divided among nor replicated over tp (2)");
  auto b = a;
  b.intermediate_size = 100;
  misfit(b, {3, 1, 1}, "tp (3) does not divide intermediate_size (100)");
  misfit(a, {1, 5, 1}, "pp (5) is more than num_hidden_layers (4)");
  misfit(a, {1, 1, 4}, "dp (4) does not divide the batch (6)");
  auto c = a;
  c.max_position_embeddings = 103;
  misfit(c, {1, 1, 1}, "seq_len + decode_steps (104) exceeds max_position_embeddings (103)");
  auto e = a;
  e.attention.causal = false;
  misfit(e, {1, 1, 1}, "is an encoder (attention.causal false) and cannot decode");
  auto m = a;
  m.moe = {4, 2, 50, true, 0, 0, 0};
  misfit(m, {3, 1, 1}, "tp (3) does not divide moe.moe_intermediate_size (50)");
  // kv heads fewer than tp are replicated.
  auto r = a;
  r.num_attention_heads = 12;
  r.num_key_value_heads = 2;
  r.intermediate_size = 240;
  EXPECT_TRUE(spec::layout_misfits(r, w, {4, 1, 1}).empty());
}

TEST(Duration, Parses) {
  EXPECT_EQ(spec::duration_parse("90"), 90.0);
  EXPECT_EQ(spec::duration_parse("90s"), 90.0);
  EXPECT_EQ(spec::duration_parse("10m"), 600.0);
  EXPECT_EQ(spec::duration_parse("1h30m"), 5400.0);
  EXPECT_FALSE(spec::duration_parse("ten minutes").has_value());
  EXPECT_FALSE(spec::duration_parse("").has_value());
  // Too large for a double: +inf, not an exception (the readers' limit rejects it).
  EXPECT_EQ(spec::duration_parse(std::string(400, '9')), HUGE_VAL);
  EXPECT_EQ(spec::duration_parse(std::string(400, '9') + "h"), HUGE_VAL);
}

class CampaignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    specs_.write("architectures/m.yaml", base_architecture_yaml());
    specs_.write("workloads/w.yaml", kWorkload);
  }
  spec::Diagnostics parse(const std::string& body, std::optional<spec::Campaign>* out = nullptr) {
    const std::string file = specs_.write("campaigns/c.yaml", body);
    spec::Diagnostics diags;
    auto c = spec::campaign_load_file(file, diags);
    if (out) *out = c;
    return diags;
  }
  std::string base() const {
    return "kind: campaign\nname: c\nscale: tiny\narchitectures: [m]\nworkloads: [w]\nlayouts: [tp1, tp2]\n";
  }
  TempSpecs specs_;
};

TEST_F(CampaignTest, ResolvesNamesInTheSpecsFolder) {
  std::optional<spec::Campaign> c;
  const auto d = parse(base(), &c);
  ASSERT_TRUE(d.ok()) << d.to_string();
  EXPECT_EQ(c->architectures.size(), 1u);
  EXPECT_EQ(c->architectures[0].doc.full.name, "test-model");
  EXPECT_EQ(c->layouts.size(), 2u);
  ASSERT_EQ(c->candidate_sets.size(), 1u);  // the implicit baseline
  EXPECT_EQ(c->candidate_sets[0].name, "baseline");
  EXPECT_EQ(c->executor.kind, "local");
}

// model_stage.graphs: on by default, off where the campaign says so, a boolean.
TEST_F(CampaignTest, ModelStageGraphsAreOnUnlessTurnedOff) {
  std::optional<spec::Campaign> c;
  ASSERT_TRUE(parse(base(), &c).ok());
  EXPECT_TRUE(c->model_stage.graphs);
  const auto d = parse(base() + "model_stage: {iterations: 4, graphs: false}\n", &c);
  ASSERT_TRUE(d.ok()) << d.to_string();
  EXPECT_FALSE(c->model_stage.graphs);
  EXPECT_EQ(c->model_stage.iterations, 4);
  EXPECT_TRUE(has_error(parse(base() + "model_stage: {graphs: sometimes}\n"), "model_stage.graphs", ""));
}

// model_stage.reference: auto by default, resident or streamed where asked, nothing else.
TEST_F(CampaignTest, ModelStageReferenceIsAutoUnlessChosen) {
  std::optional<spec::Campaign> c;
  ASSERT_TRUE(parse(base(), &c).ok());
  EXPECT_EQ(c->model_stage.reference, spec::ReferenceWeights::kAuto);
  for (const auto& [text, want] : std::vector<std::pair<std::string, spec::ReferenceWeights>>{
           {"streamed", spec::ReferenceWeights::kStreamed}, {"resident", spec::ReferenceWeights::kResident}}) {
    const auto d = parse(base() + "model_stage: {reference: " + text + "}\n", &c);
    ASSERT_TRUE(d.ok()) << d.to_string();
    EXPECT_EQ(c->model_stage.reference, want) << text;
  }
  EXPECT_TRUE(has_error(parse(base() + "model_stage: {reference: lazy}\n"), "model_stage.reference", "lazy"));
}

// A campaign outside a specs tree: the error says the folder is missing and how to name
// another (specs_dir), and specs_dir makes the names resolve.
TEST_F(CampaignTest, NamesOutsideASpecsTreeSayHowToFindThem) {
  const std::string lone = specs_.write("elsewhere/deeper/c.yaml", base());
  spec::Diagnostics d;
  EXPECT_FALSE(spec::campaign_load_file(lone, d).has_value());
  EXPECT_NE(d.to_string().find("that folder does not exist"), std::string::npos) << d.to_string();
  EXPECT_NE(d.to_string().find("set specs_dir in the campaign"), std::string::npos) << d.to_string();
  const std::string pointed = specs_.write("elsewhere/deeper/c.yaml", base() + "specs_dir: " + specs_.root() + "\n");
  spec::Diagnostics ok;
  EXPECT_TRUE(spec::campaign_load_file(pointed, ok).has_value()) << ok.to_string();
  // Where the folder exists, the message names the missing spec alone.
  EXPECT_EQ(parse(base().replace(base().find("[m]"), 3, "[mm]")).to_string().find("does not exist"), std::string::npos);
}

TEST_F(CampaignTest, Rules) {
  struct R { std::string from, to, field, msg; };
  for (const R& r : std::vector<R>{
           {"architectures: [m]", "architectures: [mm]", "architectures[0]", "no architecture named 'mm'"},
           {"architectures: [m]", "architectures: [m, m]", "architectures[1]", "is listed twice"},
           {"architectures: [m]", "architectures: []", "architectures", "expected a non-empty list"},
           {"architectures: [m]", "architectures: [../nowhere/x.yaml]", "architectures[0]", "no such file"},
           {"scale: tiny", "scale: small", "architectures[0]", "has no preset 'small' (it has: full, tiny)"},
           {"layouts: [tp1, tp2]", "layouts: [tp1, tq2]", "layouts[1]", "'tq2' is not a layout"},
           {"layouts: [tp1, tp2]", "layouts: [tp1, tp1]", "layouts[1]", "is listed twice"},
           {"layouts: [tp1, tp2]", "layouts: [{tp: 2, pq: 1}]", "layouts[0].pq", "did you mean 'pp'?"},
           {"workloads: [w]", "workloads: [{name: inline, phase: prefill}]", "workloads[0].batch",
            "required field is missing"},
           {"name: c", "name: c\nbackend: tpu", "backend", "'tpu' is not one of [cpu, cuda]"},
           {"name: c", "name: c\nexecutor: {kind: pbs}", "executor.kind", "not one of [local, slurm]"},
           {"name: c", "name: c\nexecutor: {time_limit: soon}", "executor.time_limit", "expected a positive duration"},
           {"name: c", "name: c\ncandidate_sets: {x: {rms_norm: ./missing}}", "candidate_sets.x.rms_norm",
            "does not exist"},
           {"name: c", "name: c\nkernel_stage: {iterations: 0}", "kernel_stage.iterations", "out of range"},
           {"name: c", "name: c\nrepetitons: 2", "repetitons", "did you mean 'repetitions'?"},
       }) {
    const auto d = parse(replace_line(base(), r.from, r.to));
    EXPECT_TRUE(has_error(d, r.field, r.msg)) << r.to << "\n" << d.to_string();
  }
}

// A duration that does not fit (more than a year) used to validate and then overflow
// the executor's millisecond timer, so every attempt timed out at once.
TEST_F(CampaignTest, DurationsLongerThanAYearAreErrorsAtTheirLine) {
  const std::string text = base() + "executor:\n  time_limit: \"99999999999999999h\"\n";
  const auto d = parse(text);
  ASSERT_EQ(d.items().size(), 1u) << d.to_string();
  const spec::Diagnostic& e = d.items()[0];
  EXPECT_EQ(e.field, "executor.time_limit");
  EXPECT_EQ(e.pos.line, line_of(text, "time_limit:"));
  EXPECT_EQ(e.pos.column, 3);
  EXPECT_NE(e.message.find("at most one year (31536000 s)"), std::string::npos) << e.message;
  EXPECT_NE(d.to_string().find("campaigns/c.yaml:"), std::string::npos) << d.to_string();
  for (const std::string& v : {std::string(400, '9'), std::string("8761h"), std::string("31536001")})
    EXPECT_TRUE(has_error(parse(replace_line(base(), "name: c", "name: c\nkernel_stage: {instance_time_limit: " + v +
                                                                     "}")),
                          "kernel_stage.instance_time_limit", "at most one year"))
        << v;
  EXPECT_TRUE(has_error(parse(base() + "executor: {heartbeat_timeout: 9999999999h}\n"), "executor.heartbeat_timeout",
                        "at most one year"));
  EXPECT_TRUE(parse(base() + "executor: {time_limit: 8760h}\n").ok());  // exactly a year
}

// "tp99999" matched the layout pattern although {tp: 99999} is out of range.
TEST_F(CampaignTest, LayoutNamesMeetTheSameLimitsAsLayoutMaps) {
  EXPECT_TRUE(has_error(parse(replace_line(base(), "layouts: [tp1, tp2]", "layouts: [tp1, tp99999]")), "layouts[1].tp",
                        "99999 is out of range, expected an integer in [1, 65536]"));
  EXPECT_TRUE(has_error(parse(replace_line(base(), "layouts: [tp1, tp2]", "layouts: [tp1, {tp: 99999}]")),
                        "layouts[1].tp", "99999 is out of range, expected an integer in [1, 65536]"));
}

TEST_F(CampaignTest, ErrorsInAReferencedFileNameThatFile) {
  specs_.write("architectures/bad.yaml",
               replace_line(base_architecture_yaml(), "num_key_value_heads: 8", "num_key_value_heads: 5"));
  const auto d = parse(replace_line(base(), "architectures: [m]", "architectures: [bad]"));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.items()[0].pos.file.find("architectures/bad.yaml"), std::string::npos) << d.to_string();
}

TEST_F(CampaignTest, InlineWorkloadAndPathReference) {
  std::optional<spec::Campaign> c;
  const auto d = parse(replace_line(replace_line(base(), "workloads: [w]",
                                                 "workloads: [{name: inl, phase: decode, batch: 2, seq_len: 8, "
                                                 "decode_steps: 1}, ../workloads/w.yaml]"),
                                    "architectures: [m]", "architectures: [../architectures/m.yaml]"),
                       &c);
  ASSERT_TRUE(d.ok()) << d.to_string();
  EXPECT_EQ(c->workloads[0].doc.full.name, "inl");
  EXPECT_EQ(c->workloads[1].doc.full.name, "w");
}

}  // namespace
}  // namespace fk::testing
