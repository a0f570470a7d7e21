// The communicators a model's collectives run on, for the backend its buffers live on.
//
// grid_split (collectives/grid.h) gives host-memory MPI groups. On the CPU backend the
// model uses them directly; on a device each TP and PP group of more than one rank gets
// the backend's communicator over it (CUDA: NCCL on the backend's stream), so the same
// Transformer code moves device buffers. Groups of one rank keep the host group: the
// Runtime does nothing on them.
#pragma once

#include "collectives/communicator.h"
#include "collectives/grid.h"
#include "kernels/backend.h"

#include <memory>

namespace fk::runner {

// The collectives of one rank's model (nullptr: a group of one rank, no collective).
struct ModelComms {
  collectives::Communicator* tp = nullptr;  // this rank's TP group
  collectives::Communicator* pp = nullptr;  // this rank's pipeline group (ordered by stage)
};

class ModelCommunicators {
 public:
  // Collective over each TP and PP group of `groups` (all their ranks construct it).
  // `groups` outlives this object.
  ModelCommunicators(kernels::Backend& backend, collectives::GroupComms& groups);
  ModelComms comms() const;

 private:
  collectives::GroupComms& groups_;
  std::unique_ptr<collectives::Communicator> tp_, pp_;  // device communicators, or nullptr
};

}  // namespace fk::runner
