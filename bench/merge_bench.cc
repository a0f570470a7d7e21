// Campaign merge throughput: `fk collect` over 1,000 job files, against h5copy (hdf5-tools)
// copying the same files one process per file — the way a shell script would merge
// them. The job files are synthetic but shaped like fk-runner's (2 ranks, 24 kernel
// instances x 30 timed iterations, 3 model-stage iterations of prefill + 3 decode steps
// x 8 layers, every 4th job with a candidate set of 2); they are written once into
// $FK_BENCH_DIR (default /tmp/fk_merge_bench) and reused. Writing them is not timed.
// Run: build/bench/fk_bench_merge --benchmark_repetitions=3
#include "results/campaign/merge.h"
#include "results/campaign/synthetic_job.h"
#include "results/h5/h5.h"

#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

namespace {

namespace fs = std::filesystem;
using namespace fk::results;

constexpr int kJobs = 1000;

std::string bench_dir() {
  const char* d = std::getenv("FK_BENCH_DIR");
  return d != nullptr && *d != '\0' ? d : "/tmp/fk_merge_bench";
}

// The folder of kJobs job files, written on first use.
const std::string& job_folder() {
  static const std::string folder = [] {
    const std::string dir = bench_dir() + "/jobs";
    fs::create_directories(dir);
    int have = 0;
    for (const auto& e : fs::directory_iterator(dir)) have += e.path().extension() == ".h5";
    if (have != kJobs) {
      fs::remove_all(dir);
      fs::create_directories(dir);
      for (int i = 0; i < kJobs; ++i) {
        SyntheticJobSpec s;
        s.id = fmt::format("{:012x}", 0xb000000000ULL + static_cast<unsigned>(i));
        s.campaign = "bench";
        s.architecture = fmt::format("arch-{}", i % 25);
        s.family = fmt::format("family-{}", i % 7);
        s.workload = i % 2 ? "decode" : "prefill";
        s.tp = 2;
        s.instances = 24;
        s.iterations = 30;
        s.model_iterations = 3;
        s.layers = 8;
        s.decode_steps = 3;
        s.seed = static_cast<uint64_t>(i);
        if (i % 4 == 0) {
          s.candidate_set = "set";
          s.candidate_verdicts = {"PASSED", "INCORRECT_NUMERICAL"};
        }
        job_result_write(fmt::format("{}/{}.h5", dir, s.id), synthetic_job(s));
      }
    }
    return dir;
  }();
  return folder;
}

uint64_t folder_bytes(const std::string& dir) {
  uint64_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".h5") n += e.file_size();
  return n;
}

void report(benchmark::State& state, const std::string& output) {
  state.counters["jobs_per_s"] = benchmark::Counter(kJobs, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["input_MB"] = static_cast<double>(folder_bytes(job_folder())) / 1e6;
  state.counters["output_MB"] = static_cast<double>(fs::file_size(output)) / 1e6;
}

// fk collect: H5Ocopy of every job plus the three summary tables.
void BM_CollectFull(benchmark::State& state) {
  MergeOptions o;
  o.results_dir = job_folder();
  o.output = bench_dir() + "/campaign.h5";
  for (auto _ : state) {
    const MergeResult r = campaign_merge(o);
    if (r.jobs != kJobs) state.SkipWithError("not every job merged");
  }
  report(state, o.output);
}

// The summary tables alone (every job file opened and its tables read; nothing copied).
void BM_CollectSummariesOnly(benchmark::State& state) {
  MergeOptions o;
  o.results_dir = job_folder();
  o.output = bench_dir() + "/summaries.h5";
  o.copy_jobs = false;
  for (auto _ : state) campaign_merge(o);
  report(state, o.output);
}

// Reference: h5copy, one process per job file, into one output (copies only, no summaries).
void BM_H5copyPerFile(benchmark::State& state) {
  const std::string out = bench_dir() + "/h5copy.h5";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(job_folder())) files.push_back(e.path().string());
  for (auto _ : state) {
    fs::remove(out);
    for (const std::string& f : files) {
      const std::string cmd =
          fmt::format("h5copy -p -i '{}' -o '{}' -s / -d '/jobs/{}'", f, out, fs::path(f).stem().string());
      if (std::system(cmd.c_str()) != 0) {
        state.SkipWithError("h5copy failed (install hdf5-tools)");
        break;
      }
    }
  }
  report(state, out);
}

}  // namespace

BENCHMARK(BM_CollectFull)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_CollectSummariesOnly)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_H5copyPerFile)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

BENCHMARK_MAIN();
