// Orchestrator throughput: a simulated 1,000-node campaign (8 GPUs per node, 8,000
// ranks at once) of 10,000 jobs of 1-8 ranks through the fake executor, each attempt
// "running" for 1 ms, 5% failing once. Measures what fk run itself sustains (planning,
// packing, journal with fsync, state machine, retries), jobs per second. Reference in
// the same run: the bare event loop driving the same fake attempts without the
// orchestrator (no journal, no state) — the floor of the simulation itself.
// Run: build/bench/fk_bench_orchestrator [jobs] (writes into a temporary folder)
#include "core/hash.h"
#include "orchestrator/fake_executor.h"
#include "orchestrator/run.h"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include <fcntl.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace fk::orchestrator;

namespace {

const char* kArch =
    "kind: architecture\nname: NAME\nmodel_type: llama\nsource: bench\nhidden_size: 4096\nnum_hidden_layers: 32\n"
    "num_attention_heads: 32\nnum_key_value_heads: 8\nhead_dim: 128\nintermediate_size: 14336\nvocab_size: 32000\n"
    "max_position_embeddings: 8192\nnorm: {kind: rmsnorm, eps: 1.0e-05}\nmlp: {activation: silu}\n"
    "position: {kind: rope}\n";

FakeOutcome outcome(const std::string& job, int attempt) {
  const bool flaky = fk::hash_string(job) % 20 == 0;
  if (flaky && attempt == 0) return FakeOutcome{AttemptEnd::kFailed, 3, 0.001};
  return FakeOutcome{AttemptEnd::kSucceeded, 0, 0.001};
}

}  // namespace

int main(int argc, char** argv) {
  const int archs = argc > 1 ? std::max(1, std::atoi(argv[1]) / 100) : 100;
  const fs::path dir = fs::temp_directory_path() / fmt::format("fk-orch-bench-{}", ::getpid());
  fs::create_directories(dir / "architectures");
  fs::create_directories(dir / "campaigns");
  std::string list;
  for (int i = 0; i < archs; ++i) {
    std::string a = kArch;
    a.replace(a.find("NAME"), 4, fmt::format("a{}", i));
    std::ofstream(dir / "architectures" / fmt::format("a{}.yaml", i)) << a;
    list += fmt::format("{}a{}", i ? ", " : "", i);
  }
  std::ofstream(dir / "campaigns/c.yaml")
      << "kind: campaign\nname: bench\narchitectures: [" << list
      << "]\nworkloads:\n  - {name: w0, phase: prefill, batch: 8, seq_len: 128}\n"
         "  - {name: w1, phase: decode, batch: 8, seq_len: 512, decode_steps: 4}\n"
         "layouts: [tp1, tp2, tp4, tp8, tp2pp2]\nrepetitions: 10\nexecutor: {retries: 2}\n";
  RunOptions o;
  o.campaign_file = (dir / "campaigns/c.yaml").string();
  o.results_dir = (dir / "results").string();
  o.plain = true;
  FakeExecutor* fake = nullptr;
  o.make_executor = [&](boost::asio::io_context& io) {
    auto e = std::make_unique<FakeExecutor>(io, 8000, outcome);
    fake = e.get();
    return e;
  };
  // The progress lines go to /dev/null while it runs; stdout comes back afterwards.
  std::fflush(stdout);
  const int saved_stdout = dup(STDOUT_FILENO);
  if (const int null_fd = open("/dev/null", O_WRONLY); null_fd >= 0) {
    dup2(null_fd, STDOUT_FILENO);
    close(null_fd);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = run_campaign(o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int64_t launches = fake ? fake->launches() : 0;
  const int64_t jobs = launches - launches / 21;  // not exact for the report below; recomputed from files
  (void)jobs;
  int64_t files = 0;
  for (const auto& e : fs::directory_iterator(o.results_dir)) files += e.path().extension() == ".h5";

  // Reference: the bare event loop with the same simulated attempts (1 ms each).
  boost::asio::io_context io;
  FakeExecutor bare(io, 8000, outcome);
  int64_t outstanding = 0, next = 0;
  const auto r0 = std::chrono::steady_clock::now();
  std::function<void()> fill = [&] {
    while (outstanding < 8000 / 3 && next < launches) {
      LaunchRequest req;
      req.attempt_id = fmt::format("x{}", next);
      req.job_ids = {fmt::format("x{}", next++)};
      req.results_dir = "/nonexistent";  // the bare loop writes no files: its attempts "fail" to
      ++outstanding;
      bare.launch(req, [&](const AttemptResult&) {
        --outstanding;
        fill();
      });
    }
  };
  fill();
  io.run();
  const double bare_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
  std::fflush(stdout);
  if (saved_stdout >= 0) {
    dup2(saved_stdout, STDOUT_FILENO);
    close(saved_stdout);
  }
  std::fprintf(stderr,
               "fk run (fake executor, 8000 ranks): exit %d, %lld jobs done, %lld attempts, %.2f s -> %.0f jobs/s, "
               "%.0f attempts/s\n",
               rc, static_cast<long long>(files), static_cast<long long>(launches), secs, files / secs,
               launches / secs);
  std::fprintf(stderr, "reference (bare event loop, same attempts): %.2f s -> %.0f attempts/s\n", bare_secs,
               launches / bare_secs);
  fs::remove_all(dir);
  return rc;
}
