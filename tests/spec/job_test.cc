// Job ids and the job file: content-derived ids, JSON round trip, clear errors.
#include "core/spec/job.h"
#include "core/error.h"
#include "core/fs_util.h"
#include "core/spec/spec_file.h"
#include "spec/spec_test_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <vector>

namespace fk::testing {
namespace {

spec::Job sample_job() {
  spec::Diagnostics diags;
  auto node = spec::yaml_load_string(base_architecture_yaml(), "t.yaml", diags);
  auto doc = spec::architecture_parse(*node, "t.yaml", diags);
  spec::Job j;
  j.arch = *doc->select("tiny");
  j.workload.name = "w";
  j.workload.batch = 2;
  j.workload.seq_len = 16;
  j.layout = {2, 1, 1};
  j.candidates.name = "baseline";
  j.seed = 7;
  j.memory = spec::memory_estimate(j.arch, j.workload, j.layout, j.backend);
  j.id = spec::job_compute_id(j);
  return j;
}

// A job file of campaign "c" (c.yaml, tiny) holding `jobs`.
spec::JobFile sample_job_file(std::vector<spec::Job> jobs) {
  spec::JobFile f;
  f.campaign = "c";
  f.campaign_file = "c.yaml";
  f.scale = "tiny";
  f.jobs = std::move(jobs);
  return f;
}

TEST(Job, IdDependsOnContentOnly) {
  const spec::Job a = sample_job();
  EXPECT_EQ(a.id.size(), 12u);
  spec::Job b = a;
  b.arch.source = "a different note";
  b.arch.hf_id = "x/y";
  b.time_limit_s = 1;
  EXPECT_EQ(spec::job_compute_id(b), a.id);
  for (auto mutate : std::vector<std::function<void(spec::Job&)>>{
           [](spec::Job& j) { j.seed = 8; }, [](spec::Job& j) { j.layout.tp = 1; },
           [](spec::Job& j) { j.workload.batch = 3; }, [](spec::Job& j) { j.arch.norm.eps = 1e-6; },
           [](spec::Job& j) { j.repetition = 1; }, [](spec::Job& j) { j.candidates.ops["rms_norm"] = "/x"; },
           [](spec::Job& j) { j.kernel_stage.iterations = 99; }, [](spec::Job& j) { j.model_stage.graphs = false; }}) {
    spec::Job c = a;
    mutate(c);
    EXPECT_NE(spec::job_compute_id(c), a.id);
  }
}

TEST(Job, JobFileRoundTrips) {
  TempSpecs dir;
  spec::JobFile f = sample_job_file({sample_job()});
  const std::string path = dir.root() + "/jobs.json";
  spec::job_file_write(path, f);
  const spec::JobFile g = spec::job_file_read(path);
  ASSERT_EQ(g.jobs.size(), 1u);
  EXPECT_EQ(g.jobs[0].id, f.jobs[0].id);
  EXPECT_EQ(spec::to_json(g.jobs[0].arch), spec::to_json(f.jobs[0].arch));
  EXPECT_EQ(spec::job_to_json(g.jobs[0]), spec::job_to_json(f.jobs[0]));
}

// model_stage.graphs travels in the job file when off; on (the default) it is not
// written, so job files and ids from before the field read and match as before.
TEST(Job, ModelStageGraphsRoundTripAndDefaultToOn) {
  const spec::Job on = sample_job();
  const spec::Json js = spec::job_to_json(on);
  EXPECT_FALSE(js.at("model_stage").contains("graphs"));
  EXPECT_TRUE(spec::job_from_json(js, "job").model_stage.graphs);
  spec::Job off = on;
  off.model_stage.graphs = false;
  off.id = spec::job_compute_id(off);
  EXPECT_NE(off.id, on.id);
  EXPECT_FALSE(spec::job_from_json(spec::job_to_json(off), "job").model_stage.graphs);
}

TEST(Job, BadJobFilesNameTheProblem) {
  TempSpecs dir;
  spec::JobFile f = sample_job_file({sample_job()});
  spec::Json j = spec::job_file_to_json(f);
  ASSERT_EQ(j["architectures"].size(), 1u);
  const std::string arch_key = j["architectures"].begin().key();
  const std::string workload_key = j["workloads"].begin().key();
  EXPECT_EQ(j["jobs"][0]["architecture"], arch_key);
  EXPECT_EQ(arch_key.rfind("test-model@tiny#", 0), 0u) << arch_key;
  auto expect_error = [&](const spec::Json& doc, const std::string& needle) {
    const std::string path = dir.write("bad.json", doc.dump());
    try {
      spec::job_file_read(path);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    }
  };
  spec::Json a = j;
  a["architectures"][arch_key]["hidden_size"] = "big";
  expect_error(a, "/architectures/" + arch_key + "/hidden_size: expected an integer");
  spec::Json b = j;
  b["jobs"][0]["layout"].erase("tp");
  expect_error(b, "/jobs/0/layout: missing field 'tp'");
  spec::Json c = j;
  c["workloads"][workload_key]["batch"] = 5;
  expect_error(c, "does not match the job's content");
  spec::Json d = j;
  d["version"] = 99;
  expect_error(d, "/version: job file version 99 is not supported");
  expect_error(spec::Json{{"hello", 1}}, "not a FastKernels job file");
  // A job whose key names no table entry: the job and the field.
  const std::string id = f.jobs[0].id;
  spec::Json e = j;
  e["jobs"][0]["architecture"] = "gone@tiny#000000000000";
  expect_error(e,
               "/jobs/0/architecture: job '" + id +
                   "' refers to architecture 'gone@tiny#000000000000', which the table /architectures does not hold");
  spec::Json g = j;
  g["jobs"][0]["workload"] = arch_key;
  expect_error(g, "/jobs/0/workload: job '" + id + "' refers to workload '" + arch_key + "'");
  spec::Json h = j;
  h["jobs"][0]["architecture"] = spec::to_json(f.jobs[0].arch);  // a value where a key belongs
  expect_error(h, "/jobs/0/architecture: expected a string");
  spec::Json k = j;
  k.erase("workloads");
  expect_error(k, "/: missing field 'workloads'");
  spec::Json m = j;
  m["architectures"] = spec::Json::array();
  expect_error(m, "/architectures: expected an object of key -> architecture");
  // Version 1 (every job embedding its architecture and workload) is refused by name.
  spec::Json v1{{"format", "fastkernels-jobs"}, {"version", 1}, {"campaign", "c"}, {"campaign_file", "c.yaml"},
                {"scale", "tiny"}, {"jobs", spec::Json::array({spec::job_to_json(f.jobs[0])})}};
  expect_error(v1, "bad.json: /version: job file version 1 is not supported (this build reads version 2)");
  const std::string garbage = dir.write("garbage.json", "{not json");
  EXPECT_THROW(spec::job_file_read(garbage), Error);
  EXPECT_THROW(spec::job_file_read(dir.root() + "/missing.json"), Error);
}

// Jobs share table entries only when their values are equal, notes included.
TEST(Job, JobFileTablesHoldEachDistinctValueOnce) {
  TempSpecs dir;
  spec::JobFile f = sample_job_file({});
  const spec::Job base = sample_job();
  for (int rep = 0; rep < 3; ++rep) {
    spec::Job j = base;
    j.repetition = rep;
    f.jobs.push_back(j);
    j.arch.source = "another note";  // not in the id, but a different value
    f.jobs.push_back(j);
    j.workload.batch = 4;
    f.jobs.push_back(j);
  }
  spec::Job back = base;  // the first value again, after others
  back.repetition = 9;
  f.jobs.push_back(back);
  for (auto& j : f.jobs) j.id = spec::job_compute_id(j);
  const spec::Json doc = spec::job_file_to_json(f);
  EXPECT_EQ(doc["architectures"].size(), 2u);
  EXPECT_EQ(doc["workloads"].size(), 2u);
  EXPECT_EQ(doc["jobs"][0]["architecture"], doc["jobs"][9]["architecture"]);
  EXPECT_NE(doc["jobs"][0]["architecture"], doc["jobs"][1]["architecture"]);
  const std::string path = dir.root() + "/jobs.json";
  spec::job_file_write(path, f);
  const spec::JobFile g = spec::job_file_read(path);
  ASSERT_EQ(g.jobs.size(), f.jobs.size());
  for (size_t i = 0; i < f.jobs.size(); ++i) EXPECT_EQ(spec::job_to_json(g.jobs[i]), spec::job_to_json(f.jobs[i])) << i;
  // No job: empty tables, an empty list.
  f.jobs.clear();
  spec::job_file_write(path, f);
  EXPECT_TRUE(spec::job_file_read(path).jobs.empty());
}

// A write that fails part way (here: a job JSON cannot hold, after the tables and the
// first job went out) leaves the previous file as it was and no temporary file.
TEST(Job, FailedJobFileWriteLeavesThePreviousFile) {
  TempSpecs dir;
  spec::JobFile f = sample_job_file({sample_job()});
  const std::string path = dir.root() + "/jobs.json";
  spec::job_file_write(path, f);
  const std::string before = fs_read_file(path);
  f.jobs.push_back(sample_job());
  f.jobs.back().candidates.name = "\xff";  // not UTF-8: the second job's dump throws
  EXPECT_ANY_THROW(spec::job_file_write(path, f));
  EXPECT_EQ(fs_read_file(path), before);
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.root())) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

// job_file_read converts jobs as it parses when the header and tables come first (as
// job_file_write writes them), else reads the whole document: the same jobs, the same
// messages either way.
TEST(Job, StreamedAndWholeDocumentReadsAgree) {
  TempSpecs dir;
  spec::JobFile f = sample_job_file({});
  for (int rep = 0; rep < 3; ++rep) {
    f.jobs.push_back(sample_job());
    f.jobs.back().repetition = rep;
    f.jobs.back().id = spec::job_compute_id(f.jobs.back());
  }
  std::string streamed_text;
  spec::job_file_write(f, [&](std::string_view s) { streamed_text += s; });
  const spec::Json doc = spec::Json::parse(streamed_text);
  EXPECT_LT(streamed_text.find("\"workloads\""), streamed_text.find("\"jobs\""));
  const std::string sorted_text = doc.dump();  // "jobs" before "scale", "version", "workloads"
  EXPECT_LT(sorted_text.find("\"jobs\""), sorted_text.find("\"version\""));
  for (const std::string& text : {streamed_text, sorted_text}) {
    const spec::JobFile g = spec::job_file_parse(text, "j.json");
    ASSERT_EQ(g.jobs.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(spec::job_to_json(g.jobs[i]), spec::job_to_json(f.jobs[i]));
  }
  auto error_of = [](const std::string& text) -> std::string {
    try {
      spec::job_file_parse(text, "j.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      return e.what();
    }
    return "no error";
  };
  auto replace = [](std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.rfind(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const std::string key = doc["jobs"][2]["architecture"];
  const std::string needle = "j.json: /jobs/2/architecture: job '" + f.jobs[2].id + "' refers to architecture 'x'";
  EXPECT_NE(error_of(replace(streamed_text, "\"" + key + "\"", "\"x\"")).find(needle), std::string::npos);
  EXPECT_NE(error_of(replace(sorted_text, "\"" + key + "\"", "\"x\"")).find(needle), std::string::npos);
  EXPECT_NE(error_of(replace(streamed_text, "\"repetition\":2", "\"repetition\":-1"))
                .find("j.json: /jobs/2/repetition: -1 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of(replace(streamed_text, " \"jobs\": [", " \"scale\": \"full\",\n \"jobs\": ["))
                .find("j.json: /: field 'scale' appears twice"),
            std::string::npos);
  EXPECT_NE(error_of(streamed_text.substr(0, streamed_text.size() / 2)).find("j.json: not valid JSON"),
            std::string::npos);
}

// A job file used to accept what no spec may hold (2^40 layers: fk-runner then hung
// in its loops over layers). Its reader now runs the spec loader's own validation, so
// each value meets the same limit, reported at the job file's JSON path (a table
// entry's for architectures and workloads). Each job is written with a matching id, so
// only the value can be wrong.
TEST(Job, JobFilesMeetTheSpecLimits) {
  TempSpecs dir;
  auto error_of = [&](const std::function<void(spec::Job&)>& mutate) -> std::string {
    spec::JobFile f = sample_job_file({sample_job()});
    mutate(f.jobs[0]);
    f.jobs[0].id = spec::job_compute_id(f.jobs[0]);
    const std::string path = dir.root() + "/limits.json";
    spec::job_file_write(path, f);
    try {
      spec::job_file_read(path);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_EQ(std::string(e.what()).rfind(path + ": /", 0), 0u) << e.what();
      return e.what();
    }
    return "";
  };
  struct Case {
    std::function<void(spec::Job&)> mutate;
    std::string needle;
  };
  for (const Case& c : std::vector<Case>{
           {[](spec::Job& j) { j.arch.num_hidden_layers = int64_t{1} << 40; }, "/architectures/test-model@tiny#"},
           {[](spec::Job& j) { j.arch.num_hidden_layers = int64_t{1} << 40; },
            "/num_hidden_layers: 1099511627776 is out of range, expected an integer in [1, 100000]"},
           {[](spec::Job& j) { j.arch.hidden_size = int64_t{1} << 30; }, "/hidden_size: 1073741824"},
           {[](spec::Job& j) { j.arch.norm.eps = 0; }, "/norm/eps: 0 is out of range"},
           {[](spec::Job& j) { j.arch.num_key_value_heads = 3; },
            "/num_key_value_heads: 3 does not divide num_attention_heads (8)"},
           {[](spec::Job& j) { j.arch.dtype = DType::kI32; }, "/dtype: 'int32' is not one of"},
           {[](spec::Job& j) { j.arch.attention.sliding_window = int64_t{1} << 40; },
            "/attention/sliding_window: 1099511627776 is out of range"},
           {[](spec::Job& j) { j.workload.seq_len = int64_t{1} << 40; }, "/workloads/w@full#"},
           {[](spec::Job& j) { j.workload.seq_len = int64_t{1} << 40; }, "/seq_len: 1099511627776"},
           {[](spec::Job& j) { j.workload.batch = 0; }, "/batch: 0 is out of range"},
           {[](spec::Job& j) { j.layout.pp = 1 << 20; },
            "/jobs/0/layout/pp: 1048576 is out of range, expected an integer in [1, 65536]"},
           {[](spec::Job& j) { j.kernel_stage.rounds = 5000; }, "/jobs/0/kernel_stage/rounds: 5000 is out of range"},
           {[](spec::Job& j) { j.kernel_stage.instance_time_limit_s = 1e30; },
            "/jobs/0/kernel_stage/instance_time_limit_s: 1e+30 is out of range"},
           {[](spec::Job& j) { j.model_stage.iterations = 0; }, "/jobs/0/model_stage/iterations: 0 is out of range"},
           {[](spec::Job& j) { j.time_limit_s = 3.6e20; }, "/jobs/0/time_limit_s: 3.6e+20 is out of range"},
           {[](spec::Job& j) { j.time_limit_s = 0; }, "/jobs/0/time_limit_s: 0 is out of range"},
           {[](spec::Job& j) { j.repetition = 1000; }, "/jobs/0/repetition: 1000 is out of range"},
       }) {
    const std::string e = error_of(c.mutate);
    EXPECT_NE(e.find(c.needle), std::string::npos) << c.needle << "\n" << e;
  }
  EXPECT_EQ(error_of([](spec::Job&) {}), "");
  // A number no double holds is a JSON error naming the file, not an escaping exception.
  const std::string huge = dir.write("huge.json", R"({"format": "fastkernels-jobs", "version": 1e400})");
  try {
    spec::job_file_read(huge);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("huge.json: not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(Memory, EstimateFollowsTheDocumentedFormula) {
  spec::Job j = sample_job();  // tiny: hidden 128, 2 layers, 8 heads / 2 kv, head_dim 16, inter 256, vocab 512
  ASSERT_EQ(j.arch.dtype, DType::kBF16);
  const auto est = [&](spec::Layout l, DeviceKind backend = DeviceKind::kCuda) {
    return spec::memory_estimate(j.arch, j.workload, l, backend);
  };
  const auto m1 = est({1, 1, 1});
  // Per layer: q 128x128, k/v 2x(128x32), o 128x128, 2 norms, MLP 3x128x256.
  const int64_t layer = 128 * 128 + 2 * 128 * 32 + 128 * 128 + 2 * 128 + 3 * 128 * 256;
  EXPECT_EQ(m1.parameters, 2 * layer + 512 * 128 /*embed*/ + 512 * 128 /*head*/ + 128 /*final norm*/);
  // A device holds one run at a time; the fullest is the fp32 reference run.
  EXPECT_EQ(m1.weights_bytes, m1.parameters * 4);
  EXPECT_EQ(m1.kv_cache_bytes, 2 /*layers*/ * 2 * 2 /*batch*/ * 16 * 2 /*kv heads*/ * 16 * 4);
  // The CPU keeps the fp32 master beside the bf16 copy; the rest is the same.
  const auto c1 = est({1, 1, 1}, DeviceKind::kCpu);
  EXPECT_EQ(c1.weights_bytes, m1.parameters * (4 + 2));
  EXPECT_EQ(c1.kv_cache_bytes, m1.kv_cache_bytes);
  EXPECT_EQ(c1.activation_bytes, m1.activation_bytes);
  const auto m2 = est({2, 1, 1});
  EXPECT_LT(m2.weights_bytes, m1.weights_bytes);
  EXPECT_EQ(m2.kv_cache_bytes * 2, m1.kv_cache_bytes);  // kv heads split over tp
  const auto m4 = est({4, 1, 1});
  EXPECT_EQ(m4.kv_cache_bytes, m2.kv_cache_bytes);  // kv heads replicated beyond 2
  const auto p2 = est({1, 2, 1});
  EXPECT_LT(p2.parameters, m1.parameters);
  EXPECT_EQ(m1.layer_parameters, 2 * layer);
  EXPECT_EQ(m1.largest_layer_parameters, layer);
  // MoE on CUDA: the routed experts' scratch of the largest call joins the activations
  // (the CPU's is not counted). A step of more tokens than a chunk is counted as a chunk.
  spec::Job moe = j;
  moe.arch.moe = {4, 2, 64, true, 0, 0, 0};
  const auto mc = spec::memory_estimate(moe.arch, moe.workload, {2, 1, 1}, DeviceKind::kCuda);
  const auto mh = spec::memory_estimate(moe.arch, moe.workload, {2, 1, 1}, DeviceKind::kCpu);
  const int64_t tokens = moe.workload.batch * moe.workload.seq_len;
  const int64_t rows = tokens * 2 + 4 * 255;  // pairs, each expert padded to 256-row tiles
  EXPECT_EQ(spec::moe_scratch_bytes(moe.arch, tokens, 32, 2), rows * (128 * 2 + 2 * 32 * 4 + 32 * 2 + 128 * 4));
  EXPECT_EQ(mc.activation_bytes - mh.activation_bytes, spec::moe_scratch_bytes(moe.arch, tokens, 32, 2));
  EXPECT_EQ(spec::moe_scratch_bytes(moe.arch, 10 * spec::kMoeChunkTokens, 32, 2),
            spec::moe_scratch_bytes(moe.arch, spec::kMoeChunkTokens, 32, 2));
  EXPECT_EQ(spec::moe_scratch_bytes(j.arch, tokens, 32, 2), 0) << "a dense model has no expert scratch";
}

// The estimate counts the parameters the published models have, whole and spread over 8
// ranks of tp 4 x pp 2: Llama 3.1 8B's 8,030,261,248 (github:thamada/modelQuery README,
// from Meta's params.json) and Llama 3.1 70B's count from its published dimensions, 80 x
// (8192 x (8192 + 2 x 1024) + 8192 x 8192 + 3 x 8192 x 28672 + 2 x 8192) + 2 x 128256 x
// 8192 + 8192.
TEST(Memory, ParametersAreThePublishedCounts) {
  const int64_t llama70 = int64_t{80} * (8192LL * (8192 + 2 * 1024) + 8192LL * 8192 + 3LL * 8192 * 28672 + 2 * 8192) +
                          2LL * 128256 * 8192 + 8192;
  for (const auto& [name, published] :
       std::vector<std::pair<std::string, int64_t>>{{"llama-3.1-8b", 8030261248}, {"llama-3.1-70b", llama70}}) {
    spec::Diagnostics d;
    const auto doc =
        spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/" + name + ".yaml", d);
    ASSERT_TRUE(doc.has_value()) << d.to_string();
    const spec::Architecture a = doc->full;
    spec::Workload w;
    w.name = "w";
    w.batch = 1;
    w.seq_len = 16;
    EXPECT_EQ(spec::memory_estimate(a, w, {1, 1, 1}, DeviceKind::kCuda).parameters, published) << name;
    // tp 4 x pp 2: each rank a quarter of the layers' and vocabulary's rows, half the layers.
    int64_t spread = 0;
    for (int64_t stage = 0; stage < 2; ++stage) {
      const int64_t first = spec::stage_first_layer(a.num_hidden_layers, 2, stage);
      for (int64_t l = first; l < first + spec::stage_layer_count(a.num_hidden_layers, 2, stage); ++l)
        spread += 4 * spec::layer_parameters_per_rank(a, l, 4);
    }
    // Norm weights are replicated on every TP rank; the embedding, head and final norm
    // are outside the layers.
    const int64_t norms = 2 * a.hidden_size * a.num_hidden_layers;
    EXPECT_EQ(spread - 3 * norms + 2 * a.vocab_size * a.hidden_size + a.hidden_size, published) << name;
  }
}

// A streamed reference holds the weights outside the layers and one layer's in fp32;
// the bf16 runs hold everything in bf16. The peak is the larger run, and auto
// estimates as resident.
TEST(Memory, StreamedReferenceHoldsOneLayerInFp32AndTheRestInTheWorkloadDtype) {
  spec::Job j = sample_job();
  const auto est = [&](spec::ReferenceWeights r) {
    return spec::memory_estimate(j.arch, j.workload, {1, 1, 1}, DeviceKind::kCuda, r);
  };
  const auto resident = est(spec::ReferenceWeights::kResident);
  EXPECT_EQ(spec::memory_estimate(j.arch, j.workload, {1, 1, 1}, DeviceKind::kCuda).total(), resident.total());
  EXPECT_EQ(est(spec::ReferenceWeights::kAuto).total(), resident.total());
  const auto streamed = est(spec::ReferenceWeights::kStreamed);
  const int64_t outside = resident.parameters - resident.layer_parameters;
  const int64_t fp32_run =
      (outside + resident.largest_layer_parameters) * 4 + resident.kv_cache_bytes + resident.activation_bytes;
  const int64_t bf16_run = resident.parameters * 2 + resident.kv_cache_bytes / 2 + resident.activation_bytes;
  EXPECT_EQ(streamed.total(), std::max(fp32_run, bf16_run));
  EXPECT_LT(streamed.total(), resident.total());
  EXPECT_EQ(streamed.parameters, resident.parameters);
  // On the CPU no fp32 master is kept beside the bf16 copy when the reference streams.
  const auto cpu =
      spec::memory_estimate(j.arch, j.workload, {1, 1, 1}, DeviceKind::kCpu, spec::ReferenceWeights::kStreamed);
  EXPECT_EQ(cpu.total(), streamed.total());
}

// model_stage.reference travels in the job file unless auto, so job ids from before
// the field stay what they were.
TEST(Job, ModelStageReferenceRoundTripsAndDefaultsToAuto) {
  const spec::Job a = sample_job();
  const spec::Json js = spec::job_to_json(a);
  EXPECT_FALSE(js.at("model_stage").contains("reference"));
  EXPECT_EQ(spec::job_from_json(js, "job").model_stage.reference, spec::ReferenceWeights::kAuto);
  for (auto r : {spec::ReferenceWeights::kResident, spec::ReferenceWeights::kStreamed}) {
    spec::Job b = a;
    b.model_stage.reference = r;
    b.id = spec::job_compute_id(b);
    EXPECT_NE(b.id, a.id);
    EXPECT_EQ(spec::job_from_json(spec::job_to_json(b), "job").model_stage.reference, r);
  }
  spec::Json bad = js;
  bad["model_stage"]["reference"] = "sometimes";
  try {
    spec::job_from_json(bad, "job");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("job/model_stage/reference"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sometimes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fk::testing
