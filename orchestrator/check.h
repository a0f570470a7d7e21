// `fk check`: one command a kernel author runs in a loop. For the given candidate
// folders it writes a small campaign per scale (the architectures, layouts and
// workloads asked for, one candidate set per candidate), plans it, runs it with
// fk-runner under a local mpirun, reads the job files and prints the verdict tables.
//
// Scales (presets of the architectures): by default "full" and "tiny". At "full" —
// the published sizes, e.g. Llama 3.1 8B's hidden 4096 — the jobs run the candidates'
// gates at every shape the model calls, found by the shape pass without computing the
// model (runner/model_stage.h), so an error that shows only at real widths (an fp16
// accumulator) is caught on any machine; with `full_model` the whole model runs there
// too. At any other preset the job also runs the whole model with the candidate
// swapped in (drift over the layers, greedy tokens, end-to-end time). A shape-only
// pass leaves out an architecture whose smaller preset has the published sizes (its
// shapes are checked with the whole model); an architecture without a preset is left
// out of that scale's pass, with a note.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fk::orchestrator {

struct CheckOptions {
  std::vector<std::string> candidates;  // candidate folders
  std::vector<std::string> archs;       // names in <specs>/architectures or paths
  std::vector<std::string> layouts;     // "tp1", "tp2pp1", ...
  std::vector<std::string> workloads;   // names/paths; empty: a built-in prefill and decode workload
  std::string dtype;                    // override the workloads' dtype ("" = the architecture's)
  std::vector<std::string> scales;      // presets; empty: {"full", "tiny"}
  bool full_model = false;              // the model stage also at "full"
  std::string specs_dir;                // default: the specs folder of this source tree
  std::string results_dir;              // default: ./fk-check/<first candidate>
  uint64_t seed = 1;
  int64_t rounds = 3, warmup = 3, iterations = 20;
  double instance_time_limit_s = 60;
  double heartbeat_timeout_s = 0;       // 0: the campaign default (executor.heartbeat_timeout)
  bool quiet = false;
  // "cpu" or "cuda"; "": the candidates' device when this machine has it (a cuda
  // candidate where no GPU is visible is built, then UNSUPPORTED), else cpu.
  std::string backend;
  // A compute-sanitizer tool (memcheck, racecheck, initcheck, synccheck) the device
  // candidates' workers run under: the gates at every shape, untimed, and no model
  // stage; its findings join the verdicts. "": none.
  std::string sanitize;
};

// fk-runner is supervised as fk run supervises an attempt (orchestrator/supervise.h):
// the sum of the jobs' time limits, the heartbeat timeout, SIGINT/SIGTERM stop it.
// The table shows every job that finished, also when a later one failed or hung.
// Returns the exit status: 0 when every candidate PASSED everywhere, 1 when some
// verdict is not PASSED or some job did not finish, 2 for bad input (messages already
// printed), 130/143 after SIGINT/SIGTERM.
int check_run(const CheckOptions& options);

}  // namespace fk::orchestrator
