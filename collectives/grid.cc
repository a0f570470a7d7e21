#include "collectives/grid.h"

#include "core/error.h"

#include <climits>

namespace fk::collectives {

namespace {

int checked_extent(int64_t value, std::string_view name, const spec::Layout& layout) {
  if (value < 1 || value > INT_MAX)
    fail(ErrorKind::kInvalidArgument, "grid: {} = {} in layout {} must be between 1 and {}", name, value, layout.name(),
         INT_MAX);
  return static_cast<int>(value);
}

}  // namespace

Grid::Grid(const spec::Layout& layout, int rank)
    : tp_(checked_extent(layout.tp, "tp", layout)),
      pp_(checked_extent(layout.pp, "pp", layout)),
      dp_(checked_extent(layout.dp, "dp", layout)),
      rank_(rank) {
  const int64_t total = layout.tp * layout.pp * layout.dp;
  if (total > INT_MAX)
    fail(ErrorKind::kInvalidArgument, "grid: layout {} needs {} ranks, more than an int holds", layout.name(), total);
  if (rank < 0 || rank >= total)
    fail(ErrorKind::kInvalidArgument, "grid: rank {} is outside layout {} (ranks 0..{})", rank, layout.name(),
         total - 1);
}

int Grid::rank_of(int tp_rank, int pp_rank, int dp_rank) const {
  if (tp_rank < 0 || tp_rank >= tp_ || pp_rank < 0 || pp_rank >= pp_ || dp_rank < 0 || dp_rank >= dp_)
    fail(ErrorKind::kInvalidArgument, "grid: coordinates (tp {}, pp {}, dp {}) are outside tp{}pp{}dp{}", tp_rank,
         pp_rank, dp_rank, tp_, pp_, dp_);
  return tp_rank + tp_ * (pp_rank + pp_ * dp_rank);
}

std::vector<int> Grid::tp_group() const {
  std::vector<int> out;
  for (int t = 0; t < tp_; ++t) out.push_back(rank_of(t, pp_rank(), dp_rank()));
  return out;
}

std::vector<int> Grid::pp_group() const {
  std::vector<int> out;
  for (int p = 0; p < pp_; ++p) out.push_back(rank_of(tp_rank(), p, dp_rank()));
  return out;
}

std::vector<int> Grid::dp_group() const {
  std::vector<int> out;
  for (int d = 0; d < dp_; ++d) out.push_back(rank_of(tp_rank(), pp_rank(), d));
  return out;
}

std::optional<int> Grid::prev_stage_rank() const {
  if (is_first_stage()) return std::nullopt;
  return rank_of(tp_rank(), pp_rank() - 1, dp_rank());
}

std::optional<int> Grid::next_stage_rank() const {
  if (is_last_stage()) return std::nullopt;
  return rank_of(tp_rank(), pp_rank() + 1, dp_rank());
}

std::string Grid::describe() const {
  return fmt::format("tp{}pp{}dp{} rank {} (tp {}, pp {}, dp {})", tp_, pp_, dp_, rank_, tp_rank(), pp_rank(),
                     dp_rank());
}

GroupComms grid_split(Communicator& group, const Grid& grid) {
  if (group.size() != grid.size())
    fail(ErrorKind::kInvalidArgument, "grid_split: the group has {} ranks but layout tp{}pp{}dp{} needs tp*pp*dp = {}",
         group.size(), grid.tp(), grid.pp(), grid.dp(), grid.size());
  if (group.rank() != grid.rank())
    fail(ErrorKind::kInvalidArgument, "grid_split: the grid was built for rank {} but this is group rank {}",
         grid.rank(), group.rank());
  // Colors number the groups; keys order members by their coordinate in the group.
  GroupComms out;
  out.tp = group.split(grid.pp_rank() + grid.pp() * grid.dp_rank(), grid.tp_rank());
  out.pp = group.split(grid.tp_rank() + grid.tp() * grid.dp_rank(), grid.pp_rank());
  out.dp = group.split(grid.tp_rank() + grid.tp() * grid.pp_rank(), grid.dp_rank());
  if (!out.tp || !out.pp || !out.dp) fail(ErrorKind::kInternal, "grid_split: a split returned no communicator");
  return out;
}

}  // namespace fk::collectives
