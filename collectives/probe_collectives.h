// The bandwidth probe's collectives as plug-ins (the shape of nccl-tests' struct
// testColl): each fills one ProbeCollectiveDef with its buffer shape, bus-bandwidth
// factor, expected output and how to run it; bandwidth_probe.cc owns the sweep,
// warm-up, timing and verification. Internal to collectives/.
#pragma once

#include "collectives/bandwidth_probe.h"
#include "collectives/probe_pattern.h"

namespace fk::collectives {

struct ProbeCollectiveDef {
  ProbeCollective kind;
  std::string_view name;
  bool reduces;
  bool in_place;  // runs on the receive buffer alone (broadcast)
  // Per-rank element counts for `count` = sweep bytes / sizeof(type).
  ProbeShape (*shape)(size_t count, int ranks);
  double (*bus_factor)(int ranks);
  // Expected receive element `index` on `rank`, for inputs pattern.value(q, i).
  double (*expected)(const ProbePattern& pattern, const ProbeShape& shape, int rank, int root, size_t index);
  // Runs the operation once (enqueue only; the driver synchronizes).
  void (*run)(Communicator& comm, const void* send, void* recv, const ProbeShape& shape, DType dtype, ReduceOp op,
              int root);
};

// The definition of `c` (a static table entry).
const ProbeCollectiveDef& probe_collective_def(ProbeCollective c);

}  // namespace fk::collectives
