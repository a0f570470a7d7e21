// grid_split on the world communicator: for every tp x pp x dp layout of this mpirun's
// rank count, the TP/PP/DP communicators have the right sizes and ranks, and a sum
// over each one adds exactly the ranks of that group.
#include "collectives/grid.h"
#include "core/error.h"
#include "mpi_test_env.h"

#include <numeric>

namespace fk::collectives::testing {
namespace {

using GridSplit = MpiTest;

std::vector<spec::Layout> layouts_of(int n) {
  std::vector<spec::Layout> out;
  for (int tp = 1; tp <= n; ++tp)
    for (int pp = 1; pp <= n; ++pp)
      if (n % (tp * pp) == 0) out.push_back({tp, pp, n / (tp * pp)});
  return out;
}

int64_t sum_over(Communicator& c, int64_t value) {
  int64_t out = 0;
  c.all_reduce(&value, &out, 1, DType::kI64, ReduceOp::kSum);
  return out;
}

void expect_group(Communicator& sub, int want_size, int want_rank, const std::vector<int>& members,
                  const std::string& what) {
  EXPECT_EQ(sub.size(), want_size) << what;
  EXPECT_EQ(sub.rank(), want_rank) << what;
  const int64_t want_sum = std::accumulate(members.begin(), members.end(), int64_t{0});
  EXPECT_EQ(sum_over(sub, world().rank()), want_sum) << what << ": the sum must cover exactly the group";
  // Gathering the world ranks in sub-communicator order lists the members in order.
  std::vector<int32_t> gathered(static_cast<size_t>(sub.size()), -1);
  const int32_t me = world().rank();
  sub.all_gather(&me, gathered.data(), 1, DType::kI32);
  EXPECT_EQ(std::vector<int>(gathered.begin(), gathered.end()), members) << what;
}

TEST_F(GridSplit, EveryLayoutOfThisWorld) {
  for (const spec::Layout& layout : layouts_of(world().size())) {
    const Grid grid(layout, world().rank());
    GroupComms g = grid_split(world(), grid);
    const std::string what = grid.describe();
    expect_group(*g.tp, grid.tp(), grid.tp_rank(), grid.tp_group(), what + " tp");
    expect_group(*g.pp, grid.pp(), grid.pp_rank(), grid.pp_group(), what + " pp");
    expect_group(*g.dp, grid.dp(), grid.dp_rank(), grid.dp_group(), what + " dp");
  }
}

TEST_F(GridSplit, WrongGroupSizeNamesBothNumbers) {
  const int n = world().size();
  const spec::Layout layout{2, 1, n};  // 2n ranks, never n
  const Grid grid(layout, world().rank());
  try {
    grid_split(world(), grid);
    ADD_FAILURE() << "grid_split accepted a group of " << n << " ranks for " << 2 * n;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    const std::string m = e.what();
    EXPECT_NE(m.find("has " + std::to_string(n) + " ranks"), std::string::npos) << m;
    EXPECT_NE(m.find("= " + std::to_string(2 * n)), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace fk::collectives::testing
