// `fk check <candidate-folder>... [--arch NAME ...] [--layout tp2 ...] [--scale full,tiny] [--full-model]`.
#include "orchestrator/check.h"
#include "orchestrator/commands.h"

#include <memory>

namespace fk::orchestrator {

void register_check(CLI::App& app, int* status) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* sub = app.add_subcommand("check", "Judge candidate kernels: build, gates at every shape, model stage");
  sub->add_option("candidates", o->candidates, "Candidate folders (with kernel.yaml)")->required();
  sub->add_option("--arch", o->archs, "Architectures (names or spec paths; default: llama-3.1-8b qwen3-8b gemma-2-9b)");
  sub->add_option("--layout", o->layouts, "Layouts such as tp1, tp2, tp2pp2 (default: tp1)");
  sub->add_option("--workload", o->workloads, "Workloads (names or paths; default: a small prefill and decode)");
  sub->add_option("--dtype", o->dtype, "Element type of the default workloads (default: the architecture's)");
  sub->add_option("--scale", o->scales,
                  "Architecture presets to check, e.g. --scale tiny (default: full and tiny: gates at the published "
                  "sizes' shapes, the whole model at tiny)")
      ->delimiter(',');
  sub->add_flag("--full-model", o->full_model,
                "Also run the whole model at the published sizes (needs the memory of the model)");
  sub->add_option("--specs", o->specs_dir, "Specs folder (default: this source tree's specs/)");
  sub->add_option("--results", o->results_dir, "Where job files go (default: ./fk-check/<candidate>)");
  sub->add_option("--backend", o->backend,
                  "Backend of the jobs: cpu or cuda (default: the candidates' device where this machine has one, "
                  "else cpu)");
  sub->add_flag("--sanitize{memcheck}", o->sanitize,
                "Run device candidates under compute-sanitizer: --sanitize (memcheck) or --sanitize=racecheck, "
                "initcheck, synccheck; the gates run untimed and the model stage is left out");
  sub->add_option("--seed", o->seed, "Seed of weights and inputs");
  sub->add_option("--rounds", o->rounds, "Rounds of fresh inputs per shape (default 3)");
  sub->add_option("--iterations", o->iterations, "Timed calls per shape (default 20)");
  sub->add_option("--time-limit", o->instance_time_limit_s, "Seconds per shape before TIMEOUT (default 60)");
  sub->add_option("--heartbeat-timeout", o->heartbeat_timeout_s,
                  "Seconds of silence after which fk-runner counts as hung and is stopped (default 120)");
  sub->add_flag("-q,--quiet", o->quiet, "Do not echo fk-runner's progress");
  sub->callback([o, status] { *status = check_run(*o); });
}

}  // namespace fk::orchestrator
