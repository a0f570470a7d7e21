// Bandwidth probe: an nccl-tests-style sweep over message sizes for one communicator,
// reporting time, algorithm bandwidth and bus bandwidth per size, with every row's
// data verified against exactly predictable values.
//
// Definitions (NVIDIA/nccl-tests, doc/PERFORMANCE.md and src/<collective>.cu GetBw):
//   time  = wall time per iteration, averaged over the timed iterations, max over ranks
//   algbw = S / time, in GB/s (1e9 bytes/s)
//   busbw = algbw * factor(n), n = ranks:
//     all_reduce 2(n-1)/n; reduce_scatter, all_gather, all_to_all (n-1)/n;
//     broadcast 1; sendrecv 1
//   S (bytes), with `count` = the count argument the operation is called with:
//     all_reduce, broadcast, sendrecv: count * sizeof(type)
//     all_gather:     count * sizeof(type) * n   (count = per-rank send elements)
//     reduce_scatter: count * sizeof(type) * n   (count = per-rank recv elements)
//     all_to_all:     count * sizeof(type) * n   (count = elements per peer block)
// As in nccl-tests, a sweep size B (bytes) gives the element count B / sizeof(type),
// which the collectives that split it over ranks divide by n (rounding down, so a
// size smaller than n elements runs with count 0), and the reported size is the
// larger of the per-rank send and receive buffers, which equals S.
//
// Verification (like nccl-tests' data check): after the timed iterations, each row
// runs `check_runs` more times with fresh inputs (small integers, a different seed
// each run, receive buffers poisoned with NaN / sentinels beforehand) and counts the
// elements that differ from the exactly known result; the count is summed over ranks.
// Inputs are chosen so that every partial sum is exactly representable in the dtype,
// so fp16/bf16 must come out exact on every backend.
#pragma once

#include "collectives/buffer_space.h"
#include "collectives/communicator.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace fk::collectives {

enum class ProbeCollective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kSendRecv };

// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "sendrecv".
std::string_view probe_collective_name(ProbeCollective c);
std::optional<ProbeCollective> probe_collective_parse(std::string_view name);
// All six, in the order above.
std::vector<ProbeCollective> probe_collectives_all();
// Does the collective reduce (and so take a ReduceOp)?
bool probe_collective_reduces(ProbeCollective c);

// The busbw / algbw factor for n ranks (formulas above).
double probe_bus_factor(ProbeCollective c, int ranks);

// Buffer sizes of one sweep step, in elements per rank, and S in bytes.
struct ProbeShape {
  size_t send_count = 0;   // elements in this rank's send buffer
  size_t recv_count = 0;   // elements in this rank's receive buffer
  size_t param_count = 0;  // the count argument of the operation
  size_t bytes = 0;        // S = max(send, recv) * sizeof(type)
};
// The shape of sweep size `bytes` (see the header comment).
ProbeShape probe_shape(ProbeCollective c, size_t bytes, DType dtype, int ranks);

struct ProbeOptions {
  std::vector<ProbeCollective> collectives = probe_collectives_all();
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;  // for the reducing collectives
  size_t min_bytes = 8;          // >= 1
  size_t max_bytes = 1 << 20;    // >= min_bytes
  size_t step_factor = 2;        // >= 2: sizes min, min*f, min*f^2, ... <= max
  int warmup_iters = 5;          // >= 0, per size
  int iters = 20;                // >= 1, timed, per size
  int check_runs = 1;            // >= 1 verified runs per size
  int root = 0;                  // broadcast root
};

// One line of the table: plain data, formatted by probe_format_table.
struct ProbeRow {
  ProbeCollective collective = ProbeCollective::kAllReduce;
  int ranks = 0;
  size_t bytes = 0;  // S (see above)
  size_t count = 0;  // the operation's count argument
  DType dtype = DType::kF32;
  std::optional<ReduceOp> op;  // reducing collectives only
  int root = -1;               // broadcast only
  double time_us = 0;          // per iteration, max over ranks
  double algbw_gbs = 0;
  double busbw_gbs = 0;
  int64_t wrong = 0;  // wrong elements, summed over ranks and check runs
};

// Runs the sweep on every rank of `comm` (collective: every rank calls it with the
// same options) with buffers in `space` (host memory for MPI, the device for NCCL).
// Returns the same rows on every rank. Throws fk::Error(kInvalidArgument) for bad
// options, kUnsupported when `comm` cannot reduce dtype with op, and whatever the
// communicator throws.
std::vector<ProbeRow> probe_run(Communicator& comm, const ProbeOptions& options,
                                BufferSpace& space = host_buffer_space());

}  // namespace fk::collectives
