// One forward pass of a model for given token ids (`fk forward`, run by
// `fk-runner --forward` on the ranks of a layout): the debugging and parity tool.
//
// Every rank reads the architecture spec, the inputs and its own shard of the weights
// (a checkpoint, or the spec's random weights with --seed), runs the prefill of all the
// input positions in the layout (TP/PP/DP, the same Transformer the jobs use) on its
// backend (the CPU, or its node-local GPU with NCCL between ranks), and rank 0 writes
// one safetensors file:
//   logits             [batch, seq, vocab] fp32 (models with an LM head), or
//   last_hidden_state  [batch, seq, hidden] fp32 (encoders)
//   hidden_states.<i>  [batch, seq, hidden] fp32, i = 0..L, HF's output_hidden_states
//                      convention: 0 the embedding output, i the output of layer i - 1,
//                      and L the final norm's output where the model has one.
// Each value is produced on exactly one rank; a sum over the world brings them to
// rank 0 (adding zeros is exact), so no rank waits on another's schedule.
#pragma once

#include "collectives/communicator.h"
#include "core/spec/architecture.h"
#include "core/spec/workload.h"
#include "core/tensor.h"

#include <functional>
#include <string>

namespace fk::runner {

struct ForwardOptions {
  std::string spec_file;      // architecture spec (YAML)
  std::string preset = "full";
  std::string weights;        // checkpoint; "" = the spec's checkpoint, else random (seed)
  std::string inputs;         // safetensors file with input_ids int64 [batch, seq]
                              // (a vision encoder's: pixel_values float [batch, C, S, S])
  std::string layout = "tp1";
  std::string dtype = "fp32";
  std::string output;         // safetensors file to write (rank 0)
  uint64_t seed = 0;          // random weights when there is no checkpoint
  std::string backend = "cpu";  // where the model runs: cpu, or cuda (one GPU per node-local rank)
};

// What every rank needs, checked: throws fk::Error naming the file, field or flag.
struct ForwardPlan {
  spec::Architecture arch;
  spec::Layout layout;
  spec::Workload workload;  // prefill of the inputs' batch x seq in the chosen dtype
  std::string weights;      // checkpoint path, or "" for random weights
  uint64_t seed = 0;
  Tensor input_ids;  // [batch, seq] int64, or a vision encoder's images [batch, C, S, S] fp32
  std::string output;
  DeviceKind backend = DeviceKind::kCpu;
};
ForwardPlan forward_prepare(const ForwardOptions& options, int world_size);

// Collective over `world` (its size is the layout's ranks); rank 0 writes plan.output.
// Returns a one-line summary on rank 0. `agree` is called by every rank once its
// weights are loaded, with "" or its problem: it must return on every rank when all
// succeeded and throw on every rank otherwise (runner_main reports the failing rank's
// message), so a bad checkpoint never leaves ranks waiting in a collective.
using Agree = std::function<void(const std::string& problem)>;
std::string forward_execute(const ForwardPlan& plan, collectives::Communicator& world, const Agree& agree);

}  // namespace fk::runner
