// Job file time, memory and size (GitHub issue 9: `fk plan --emit` grew ~21 KB of
// memory per job). Plans a campaign of the shipped architectures (11) x workloads (5)
// x 6 layouts (unfit ones skipped) x 2 candidate sets x N repetitions — 100,400 jobs
// for N = 200 — and runs each step in its own child process, so that the peak RSS
// getrusage reports for the child is that step's alone:
//   baseline        the child doing nothing (the parsed campaign, the binary)
//   plan            plan_campaign only: the Plan (jobs with their architecture by value)
//   plan+table      plus the table fk plan prints, row by row (to /dev/null)
//   plan+v1         reference: the version-1 writer, every job's full JSON in one
//                   in-memory document, dumped and written (what main did before)
//   plan+v2         job_file_write: tables once, then job by job to the file
//   read v2         job_file_read of the file plan+v2 wrote (fk-runner, fk status)
// Run: build/bench/fk_bench_job_file [repetitions [candidate sets]]   (default 200 2)
// e.g. `1000 4` plans 1,004,000 jobs; plan+v1 is left out above 200,000 jobs (it needs
// about 31 KB per job).
#include "core/fs_util.h"
#include "core/spec/job.h"
#include "core/spec/spec_file.h"
#include "orchestrator/plan.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace fk;

struct Outcome {
  double wall_s = 0;
  double peak_rss_mib = 0;
};

// Runs `step` in a child; its wall time and peak RSS.
Outcome in_child(const std::function<void()>& step) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    try {
      step();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "step failed: %s\n", e.what());
      std::_Exit(1);
    }
    std::_Exit(0);
  }
  int status = 0;
  rusage ru{};
  if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "fk_bench_job_file: a step failed\n");
    std::exit(1);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {wall, static_cast<double>(ru.ru_maxrss) / 1024.0};  // ru_maxrss is in KiB on Linux
}

orchestrator::Plan plan_or_die(const spec::Campaign& c) {
  spec::Diagnostics diags;
  auto plan = orchestrator::plan_campaign(c, diags);
  if (!plan) throw std::runtime_error(diags.to_string());
  return std::move(*plan);
}

// The version-1 writer, kept here as the reference: one document of fully embedded jobs.
void write_v1(const std::string& path, const spec::JobFile& f) {
  spec::Json jobs = spec::Json::array();
  for (const auto& j : f.jobs) jobs.push_back(spec::job_to_json(j));
  const spec::Json doc{{"format", "fastkernels-jobs"},     {"version", 1},     {"campaign", f.campaign},
                       {"campaign_file", f.campaign_file}, {"scale", f.scale}, {"jobs", jobs}};
  fs_write_file_atomic(path, doc.dump(1) + "\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
  const int sets = argc > 2 ? std::atoi(argv[2]) : 2;
  std::string candidate_sets = "baseline: {}";
  for (int i = 1; i < sets; ++i)
    candidate_sets += fmt::format(", agent{}: {{rms_norm: {}/candidates/rms_norm}}", i, FK_SOURCE_DIR);
  const fs::path dir = fs::temp_directory_path() / fmt::format("fk_bench_job_file.{}", ::getpid());
  fs::create_directories(dir);
  const std::string src = FK_SOURCE_DIR;
  const std::string yaml = (dir / "campaign.yaml").string();
  fs_write_file_atomic(
      yaml, fmt::format("kind: campaign\nname: bench\nscale: full\nrepetitions: {}\nspecs_dir: {}/specs\n"
                        "architectures: [llama-3.1-8b, mistral-7b, qwen3-8b, qwen2.5-7b, mixtral-8x7b, qwen3-30b-a3b,\n"
                        "                gemma-2-9b, gemma-3-27b, phi-3-mini, bert-base, gpt2]\n"
                        "workloads: [prefill-512, decode-b32, latency-b1, long-context-32k, encode-512]\n"
                        "layouts: [tp1, tp2, tp4, tp8, tp2pp2, tp4pp2]\nunfit_layouts: skip\n"
                        "candidate_sets: {{{}}}\n",
                        reps, src, candidate_sets));
  spec::Diagnostics diags;
  const auto campaign = spec::campaign_load_file(yaml, diags);
  if (!campaign) {
    std::fprintf(stderr, "%s", diags.to_string().c_str());
    return 1;
  }
  // The parent never plans (its heap would count in every child's RSS): the plan step
  // leaves the job count in a file.
  const std::string v1 = (dir / "jobs-v1.json").string(), v2 = (dir / "jobs-v2.json").string();
  const std::string count_file = (dir / "jobs.count").string();
  struct Step {
    const char* name;
    std::function<void()> run;
    std::string file;
  };
  const Step baseline_step{"baseline", [] {}, ""};
  const Step plan_step{
      "plan", [&] { fs_write_file_atomic(count_file, std::to_string(plan_or_die(*campaign).job_file.jobs.size())); },
      ""};
  const Outcome baseline = in_child(baseline_step.run);
  const Outcome planned = in_child(plan_step.run);
  const size_t jobs = std::stoull(fs_read_file(count_file));
  std::vector<Step> steps = {
      {"plan+table",
       [&] {
         std::FILE* null = std::fopen("/dev/null", "w");
         orchestrator::plan_write_table(plan_or_die(*campaign),
                                        [&](std::string_view s) { std::fwrite(s.data(), 1, s.size(), null); });
         std::fclose(null);
       },
       ""},
      {"plan+v2 (job_file_write)", [&] { spec::job_file_write(v2, plan_or_die(*campaign).job_file); }, v2},
      {"read v2 (job_file_read)", [&] { (void)spec::job_file_read(v2); }, ""},
  };
  if (jobs <= 200000)
    steps.insert(steps.begin() + 1,
                 {"plan+v1 (reference)", [&] { write_v1(v1, plan_or_die(*campaign).job_file); }, v1});
  fmt::print("{} jobs ({} repetitions, {} candidate sets); files in {}\n\n", jobs, reps, sets, dir.string());
  fmt::print(
      "| step | wall | peak RSS | RSS per job over baseline | file | file per job |\n|---|---|---|---|---|---|\n");
  auto report = [&](const Step& s, const Outcome& o) {
    const double per_job = (o.peak_rss_mib - baseline.peak_rss_mib) * 1024 * 1024 / static_cast<double>(jobs);
    std::string file = "-", file_per_job = "-";
    if (!s.file.empty()) {
      const auto bytes = static_cast<double>(fs::file_size(s.file));
      file = fmt::format("{:.1f} MB", bytes / 1e6);
      file_per_job = fmt::format("{:.0f} B", bytes / static_cast<double>(jobs));
    }
    fmt::print("| {} | {:.2f} s | {:.0f} MiB | {:.0f} B | {} | {} |\n", s.name, o.wall_s, o.peak_rss_mib, per_job, file,
               file_per_job);
    std::fflush(stdout);
  };
  report(baseline_step, baseline);
  report(plan_step, planned);
  for (const auto& s : steps) report(s, in_child(s.run));
  fs::remove_all(dir);
  return 0;
}
