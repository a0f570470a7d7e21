// Grid: where one rank sits in a tp x pp x dp layout, and the communicators of its
// groups.
//
// Megatron order, TP fastest-varying (so a TP group is tp consecutive ranks and stays
// inside a node), then PP, then DP:
//   tp_rank = rank % tp,  pp_rank = (rank / tp) % pp,  dp_rank = rank / (tp * pp)
//   rank    = tp_rank + tp * (pp_rank + pp * dp_rank)
// A rank's TP group varies tp_rank with (pp_rank, dp_rank) fixed; its PP group varies
// pp_rank (the pipeline, stage 0 first); its DP group varies dp_rank.
//
// Grid is an immutable value (in the spirit of TensorRT-LLM's runtime/worldConfig.h):
// built once, checked at construction, cheap to copy. Ranks here are ranks of the job
// group the layout runs on, not of MPI_COMM_WORLD.
#pragma once

#include "collectives/communicator.h"
#include "core/spec/workload.h"

#include <memory>
#include <optional>
#include <vector>

namespace fk::collectives {

class Grid {
 public:
  // Throws fk::Error(kInvalidArgument) unless tp, pp, dp >= 1, their product fits in
  // an int, and 0 <= rank < tp * pp * dp.
  Grid(const spec::Layout& layout, int rank);

  int tp() const { return tp_; }
  int pp() const { return pp_; }
  int dp() const { return dp_; }
  int size() const { return tp_ * pp_ * dp_; }
  int rank() const { return rank_; }
  int tp_rank() const { return rank_ % tp_; }
  int pp_rank() const { return (rank_ / tp_) % pp_; }
  int dp_rank() const { return rank_ / (tp_ * pp_); }

  // The group rank at these coordinates (each within its range; kInvalidArgument else).
  int rank_of(int tp_rank, int pp_rank, int dp_rank) const;

  // Member ranks of this rank's groups, ascending (= ordered by tp/pp/dp rank).
  std::vector<int> tp_group() const;
  std::vector<int> pp_group() const;
  std::vector<int> dp_group() const;

  bool is_first_stage() const { return pp_rank() == 0; }
  bool is_last_stage() const { return pp_rank() == pp_ - 1; }
  // The rank holding the previous / next pipeline stage of this rank's model replica
  // and TP slice; nullopt at the first / last stage (no wrap-around).
  std::optional<int> prev_stage_rank() const;
  std::optional<int> next_stage_rank() const;

  // "tp2pp2dp2 rank 5 (tp 1, pp 0, dp 1)".
  std::string describe() const;

  bool operator==(const Grid&) const = default;

 private:
  int tp_ = 1, pp_ = 1, dp_ = 1, rank_ = 0;
};

// The communicators of one rank's TP, PP and DP groups (never null after grid_split).
struct GroupComms {
  std::unique_ptr<Communicator> tp, pp, dp;
};

// Splits `group` into this rank's TP, PP and DP communicators (three collective
// splits, in that order, over `group`); each sub-communicator's rank equals the
// grid's tp_rank / pp_rank / dp_rank. Throws fk::Error(kInvalidArgument) when
// group.size() != tp*pp*dp (naming both) or group.rank() != grid.rank().
GroupComms grid_split(Communicator& group, const Grid& grid);

}  // namespace fk::collectives
