// `fk forward <spec.yaml> --inputs IN.safetensors [--weights CKPT] [--layout tp2pp2]
//             [--dtype fp32|bf16|fp16] [--backend cpu|cuda] -o OUT.safetensors`
//
// One forward pass of a model on the CPU or CUDA backend (runner/forward.h says what
// is written). fk checks the arguments it can, then launches the ranks the layout needs:
// `mpirun -np <tp*pp*dp> fk-runner --forward ...` ($FK_MPIRUN, $FK_RUNNER as for
// fk run), or fk-runner alone for one rank, in a process group of its own under a time
// limit (--timeout, default one hour). SIGINT/SIGTERM stop that group (a second one
// kills it at once) and fk exits 130/143 with nothing left running. The runner's
// messages pass through; the exit status is the runner's (2 bad input, 3 failed, 4
// crashed), 3 after the time limit.
#include "core/device.h"
#include "core/spec/spec_file.h"
#include "core/spec/workload.h"
#include "core/subprocess.h"
#include "orchestrator/commands.h"
#include "orchestrator/launch.h"

#include <fmt/format.h>
#include <unistd.h>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace fk::orchestrator {
namespace {

struct ForwardArgs {
  std::string spec, preset = "full", weights, inputs, layout = "tp1", dtype = "fp32", output, backend = "cpu";
  uint64_t seed = 0;
  double timeout_s = 3600;
};

std::atomic<int> g_stop{0};
std::atomic<int> g_signal{0};

void on_stop_signal(int sig) {
  g_signal.store(sig);
  g_stop.fetch_add(1);
}

int forward_main(const ForwardArgs& a) {
  const auto layout = spec::layout_parse(a.layout);
  if (!layout) {
    fmt::print(stderr, "fk forward: --layout {}: expected e.g. tp1, tp2, pp2, tp2pp2, tp2dp2\n", a.layout);
    return 2;
  }
  if (!device_kind_parse(a.backend)) {
    fmt::print(stderr, "fk forward: --backend {}: expected cpu or cuda\n", a.backend);
    return 2;
  }
  for (const auto& [flag, path] : {std::pair<std::string, std::string>{"spec", a.spec}, {"--inputs", a.inputs},
                                   {"--weights", a.weights}})
    if (!path.empty() && !std::filesystem::exists(path)) {
      fmt::print(stderr, "fk forward: {} {}: no such file\n", flag, path);
      return 2;
    }
  const int ranks = static_cast<int>(layout->ranks());
  std::vector<std::string> cmd;
  if (ranks > 1) cmd = mpirun_prefix(ranks, a.backend != "cpu");  // device ranks unbound, as fk run's
  cmd.insert(cmd.end(), {runner_path(), "--forward", a.spec, "--preset", a.preset, "--inputs", a.inputs, "--layout",
                         a.layout, "--dtype", a.dtype, "--seed", std::to_string(a.seed), "--forward-backend", a.backend,
                         "-o", a.output});
  if (!a.weights.empty()) cmd.insert(cmd.end(), {"--weights", a.weights});
  if (!(a.timeout_s >= 0) || a.timeout_s > 31536000) {
    fmt::print(stderr, "fk forward: --timeout {}: expected seconds in [0, 31536000] (0: none)\n", a.timeout_s);
    return 2;
  }
  struct sigaction sa = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int = {}, old_term = {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  SubprocessOptions so;
  so.timeout_s = a.timeout_s;
  so.stop = &g_stop;
  so.on_line = [](const std::string& line) { fmt::print("{}\n", line); };
  if (geteuid() == 0) so.extra_env = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
  // One rank runs as an MPI singleton; isolated, it starts no orted of its own (0.3 s of
  // a tiny model's 0.9 s here). A setting of the caller's own is kept.
  if (ranks == 1 && std::getenv("OMPI_MCA_ess_singleton_isolated") == nullptr)
    so.extra_env.push_back("OMPI_MCA_ess_singleton_isolated=1");
  const SubprocessResult r = subprocess_run(cmd, so);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (r.stopped) {
    fmt::print(stderr, "fk forward: stopped by {}; fk-runner ended\n", signal_name(g_signal.load()));
    return 128 + g_signal.load();
  }
  if (!r.started) {
    fmt::print(stderr, "fk forward: cannot start {}: {}\n", cmd[0], r.error);
    return 3;
  }
  if (r.ok()) return 0;
  if (r.exit_code > 0 && r.signal == 0 && !r.timed_out) return r.exit_code;
  fmt::print(stderr, "fk forward: fk-runner ended: {}\n", r.describe());
  return r.timed_out ? 3 : 4;
}

}  // namespace

void register_forward(CLI::App& app, int* status) {
  auto a = std::make_shared<ForwardArgs>();
  CLI::App* sub = app.add_subcommand("forward", "One forward pass of a model: logits and every layer's hidden states");
  sub->add_option("spec", a->spec, "Architecture spec (YAML; fk import-hf writes one from a config.json)")->required();
  sub->add_option(
         "--inputs", a->inputs,
         "Safetensors file with input_ids (int64 [batch, seq]; a vision encoder's: pixel_values [batch, channels, "
         "image_size, image_size])")
      ->required();
  sub->add_option("-o,--output", a->output, "Safetensors file to write")->required();
  sub->add_option("--weights", a->weights, "Checkpoint: .safetensors file or folder (default: the spec's checkpoint, "
                                           "else random weights from --seed)");
  sub->add_option("--layout", a->layout, "tpNppNdpN: the ranks to run on (default tp1)");
  sub->add_option("--dtype", a->dtype, "fp32, bf16 or fp16 (default fp32)");
  sub->add_option("--preset", a->preset, "The spec's preset (default full)");
  sub->add_option("--backend", a->backend, "Where the model runs: cpu (default) or cuda (one GPU per rank)");
  sub->add_option("--seed", a->seed, "Seed of random weights (no checkpoint)");
  sub->add_option("--timeout", a->timeout_s, "Seconds before the ranks are stopped (default 3600; 0: none)");
  sub->callback([a, status] { *status = forward_main(*a); });
}

}  // namespace fk::orchestrator
