// Planning throughput: expands a 10,000-job campaign (100 architectures x 10
// workloads x 5 layouts x 2 candidate sets) held in memory. Spec parsing is not
// timed; expansion, fit checks, memory estimates and content ids are.
// Run: build/bench/fk_bench_plan --benchmark_repetitions=5
#include "orchestrator/plan.h"

#include <benchmark/benchmark.h>

#include <fmt/format.h>

namespace {

using namespace fk::spec;

Campaign make_campaign(int archs, int workloads) {
  Campaign c;
  c.name = "bench";
  c.scale = "full";
  for (int i = 0; i < archs; ++i) {
    ArchitectureRef ref;
    Architecture& a = ref.doc.full;
    a.name = fmt::format("arch-{}", i);
    a.model_type = "llama";
    a.source = "bench";
    a.hidden_size = 4096 + 128 * i;
    a.num_hidden_layers = 32;
    a.num_attention_heads = 32;
    a.num_key_value_heads = 8;
    a.head_dim = 128;
    a.intermediate_size = 14336;
    a.vocab_size = 128256;
    a.max_position_embeddings = 131072;
    if (i % 3 == 0) a.moe = MoeSpec{8, 2, 14336, true, 0, 0, 0};
    if (i % 4 == 0) a.attention.sliding_window = 4096;
    c.architectures.push_back(std::move(ref));
  }
  for (int i = 0; i < workloads; ++i) {
    WorkloadRef ref;
    ref.doc.full.name = fmt::format("w{}", i);
    ref.doc.full.phase = i % 2 ? Phase::kDecode : Phase::kPrefill;
    ref.doc.full.batch = 8 << (i % 3);
    ref.doc.full.seq_len = 512 << (i % 4);
    ref.doc.full.decode_steps = 4;
    c.workloads.push_back(std::move(ref));
  }
  for (auto l : {Layout{1, 1, 1}, Layout{2, 1, 1}, Layout{4, 1, 1}, Layout{2, 2, 1}, Layout{4, 2, 1}})
    c.layouts.push_back({l, {}});
  c.candidate_sets = {{"baseline", {}}, {"agent", {{"rms_norm", "/candidates/x"}}}};
  return c;
}

void BM_Plan10k(benchmark::State& state) {
  const Campaign c = make_campaign(100, 10);
  size_t jobs = 0;
  for (auto _ : state) {
    Diagnostics diags;
    auto plan = fk::orchestrator::plan_campaign(c, diags);
    if (!plan) state.SkipWithError("plan failed");
    jobs = plan->job_file.jobs.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["jobs"] = static_cast<double>(jobs);
  state.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Plan10k)->Unit(benchmark::kMillisecond);

void BM_Plan10kWithTable(benchmark::State& state) {
  const Campaign c = make_campaign(100, 10);
  for (auto _ : state) {
    Diagnostics diags;
    auto plan = fk::orchestrator::plan_campaign(c, diags);
    std::string table = fk::orchestrator::plan_format_table(*plan);
    benchmark::DoNotOptimize(table);
  }
}
BENCHMARK(BM_Plan10kWithTable)->Unit(benchmark::kMillisecond);

}  // namespace

// Reference for the id scheme: hashing each job's full canonical JSON, re-serialising
// its architecture per job (what a straightforward implementation does).
void BM_Ids10kPerJobJson(benchmark::State& state) {
  const Campaign c = make_campaign(100, 10);
  Diagnostics diags;
  const auto plan = fk::orchestrator::plan_campaign(c, diags);
  for (auto _ : state) {
    size_t n = 0;
    for (const auto& job : plan->job_file.jobs) n += job_compute_id(job).size();
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(BM_Ids10kPerJobJson)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
