// Grid mapping (no MPI): for every layout of 1, 2, 4 and 8 ranks and every rank, the
// Megatron-order coordinates, group members (TP groups are consecutive ranks), stage
// neighbours and the worked example of docs/collectives.md (tp2pp2dp2 on 8 ranks).
#include "collectives/grid.h"
#include "core/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace fk::collectives {
namespace {

std::vector<spec::Layout> layouts_of(int n) {
  std::vector<spec::Layout> out;
  for (int tp = 1; tp <= n; ++tp)
    for (int pp = 1; pp <= n; ++pp)
      if (n % (tp * pp) == 0) out.push_back({tp, pp, n / (tp * pp)});
  return out;
}

TEST(Grid, LayoutCountsOfSmallWorlds) {
  // Ordered factorisations into three factors: 1, 3, 6 and 10 layouts.
  EXPECT_EQ(layouts_of(1).size(), 1u);
  EXPECT_EQ(layouts_of(2).size(), 3u);
  EXPECT_EQ(layouts_of(4).size(), 6u);
  EXPECT_EQ(layouts_of(8).size(), 10u);
}

TEST(Grid, EveryLayoutOf1248Ranks) {
  for (int n : {1, 2, 4, 8}) {
    for (const spec::Layout& l : layouts_of(n)) {
      std::set<std::vector<int>> tp_groups, pp_groups, dp_groups;
      for (int rank = 0; rank < n; ++rank) {
        const Grid g(l, rank);
        SCOPED_TRACE(g.describe());
        EXPECT_EQ(g.size(), n);
        EXPECT_EQ(g.tp_rank(), rank % l.tp);
        EXPECT_EQ(g.pp_rank(), (rank / l.tp) % l.pp);
        EXPECT_EQ(g.dp_rank(), rank / (l.tp * l.pp));
        EXPECT_EQ(g.rank_of(g.tp_rank(), g.pp_rank(), g.dp_rank()), rank);

        // TP: consecutive ranks starting at a multiple of tp.
        std::vector<int> tp = g.tp_group();
        ASSERT_EQ(tp.size(), static_cast<size_t>(l.tp));
        for (int i = 0; i < l.tp; ++i) EXPECT_EQ(tp[static_cast<size_t>(i)], rank - g.tp_rank() + i);
        // PP: stride tp; DP: stride tp*pp; each contains this rank at its coordinate.
        std::vector<int> pp = g.pp_group(), dp = g.dp_group();
        ASSERT_EQ(pp.size(), static_cast<size_t>(l.pp));
        ASSERT_EQ(dp.size(), static_cast<size_t>(l.dp));
        for (int i = 0; i < l.pp; ++i)
          EXPECT_EQ(pp[static_cast<size_t>(i)], rank + static_cast<int>(l.tp) * (i - g.pp_rank()));
        for (int i = 0; i < l.dp; ++i)
          EXPECT_EQ(dp[static_cast<size_t>(i)], rank + static_cast<int>(l.tp * l.pp) * (i - g.dp_rank()));
        EXPECT_EQ(tp[static_cast<size_t>(g.tp_rank())], rank);
        EXPECT_EQ(pp[static_cast<size_t>(g.pp_rank())], rank);
        EXPECT_EQ(dp[static_cast<size_t>(g.dp_rank())], rank);
        tp_groups.insert(tp);
        pp_groups.insert(pp);
        dp_groups.insert(dp);

        // Stages.
        EXPECT_EQ(g.is_first_stage(), g.pp_rank() == 0);
        EXPECT_EQ(g.is_last_stage(), g.pp_rank() == l.pp - 1);
        if (g.is_first_stage())
          EXPECT_FALSE(g.prev_stage_rank().has_value());
        else
          EXPECT_EQ(g.prev_stage_rank(), rank - static_cast<int>(l.tp));
        if (g.is_last_stage())
          EXPECT_FALSE(g.next_stage_rank().has_value());
        else
          EXPECT_EQ(g.next_stage_rank(), rank + static_cast<int>(l.tp));
      }
      // The groups of each kind partition the ranks.
      EXPECT_EQ(tp_groups.size(), static_cast<size_t>(n / l.tp)) << l.name();
      EXPECT_EQ(pp_groups.size(), static_cast<size_t>(n / l.pp)) << l.name();
      EXPECT_EQ(dp_groups.size(), static_cast<size_t>(n / l.dp)) << l.name();
    }
  }
}

TEST(Grid, WorkedExampleTp2Pp2Dp2) {
  const spec::Layout l{2, 2, 2};
  // rank: (tp, pp, dp) as in docs/collectives.md.
  const int want[8][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
  for (int r = 0; r < 8; ++r) {
    const Grid g(l, r);
    EXPECT_EQ(g.tp_rank(), want[r][0]) << r;
    EXPECT_EQ(g.pp_rank(), want[r][1]) << r;
    EXPECT_EQ(g.dp_rank(), want[r][2]) << r;
  }
  const Grid g5(l, 5);
  EXPECT_EQ(g5.tp_group(), (std::vector<int>{4, 5}));
  EXPECT_EQ(g5.pp_group(), (std::vector<int>{5, 7}));
  EXPECT_EQ(g5.dp_group(), (std::vector<int>{1, 5}));
  EXPECT_TRUE(g5.is_first_stage());
  EXPECT_EQ(g5.next_stage_rank(), 7);
  EXPECT_EQ(g5.describe(), "tp2pp2dp2 rank 5 (tp 1, pp 0, dp 1)");
}

TEST(Grid, RejectsBadLayoutsAndRanks) {
  EXPECT_THROW(Grid({0, 1, 1}, 0), Error);
  EXPECT_THROW(Grid({2, -1, 1}, 0), Error);
  EXPECT_THROW(Grid({2, 2, 2}, 8), Error);
  EXPECT_THROW(Grid({2, 2, 2}, -1), Error);
  EXPECT_THROW(Grid({1 << 20, 1 << 20, 1}, 0), Error);  // more ranks than an int holds
  try {
    Grid({2, 2, 1}, 4);
    ADD_FAILURE() << "rank 4 of a 4-rank layout was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("tp2pp2dp1"), std::string::npos) << e.what();
  }
  const Grid g({2, 2, 1}, 0);
  EXPECT_THROW(g.rank_of(2, 0, 0), Error);
}

}  // namespace
}  // namespace fk::collectives
