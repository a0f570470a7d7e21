// Statistics behind fk compare and fk report: exact and approximate rank tests
// against values worked out by hand, geometric means, and the TableStack that builds
// the campaign summaries.
#include "reports_test_util.h"
#include "results/campaign/stats.h"
#include "results/campaign/table_stack.h"

#include <cmath>
#include <random>

namespace fk::results {
namespace {

using testing::expect_error;

TEST(Stats, MannWhitneyExactSmallSamples) {
  // Every b above every a: 1 arrangement in C(6, 3) = 20.
  EXPECT_NEAR(stats_mann_whitney_greater({1, 2, 3}, {4, 5, 6}), 1.0 / 20, 1e-12);
  EXPECT_NEAR(stats_mann_whitney_greater({4, 5, 6}, {1, 2, 3}), 1.0, 1e-12);
  // U = 7 of 9 pairs; of the 20 arrangements, U = 7, 7, 8, 9 reach it: 4 of 20.
  EXPECT_NEAR(stats_mann_whitney_greater({1, 2, 5}, {3, 4, 6}), 4.0 / 20, 1e-12);
  EXPECT_NEAR(stats_mann_whitney_min_p(3, 3), 1.0 / 20, 1e-12);
  EXPECT_EQ(stats_mann_whitney_greater({}, {1}), 1.0);
}

TEST(Stats, MannWhitneyNormalApproximationAgreesWithExact) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0, 1);
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) a.push_back(n(rng));
  for (int i = 0; i < 20; ++i) b.push_back(n(rng) + 0.8);
  const double exact = stats_mann_whitney_greater(a, b);  // n + m = 40: exact
  b.push_back(b.back());                                  // a tie and n + m = 41: normal approximation
  const double approx = stats_mann_whitney_greater(a, b);
  EXPECT_LT(exact, 0.01);
  EXPECT_NEAR(std::log10(approx), std::log10(exact), 0.5);
}

TEST(Stats, SignedRankAndSignTests) {
  EXPECT_NEAR(stats_signed_rank_greater({0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}), 1.0 / 256, 1e-12);
  EXPECT_NEAR(stats_signed_rank_greater({-0.1, -0.2, -0.3, -0.4, -0.5, -0.6, -0.7, -0.8}), 1.0, 1e-12);
  // Symmetric values: W+ = 18 of 36, p = P(W+ >= 18) is just above one half.
  const double p = stats_signed_rank_greater({-0.1, 0.1 + 1e-9, -0.2, 0.2 + 1e-9, -0.3, 0.3 + 1e-9, -0.4, 0.4 + 1e-9});
  EXPECT_GT(p, 0.4);
  EXPECT_EQ(stats_signed_rank_greater({0, 0}), 1.0);
  EXPECT_NEAR(stats_sign_test_greater(8, 8), 1.0 / 256, 1e-12);
  EXPECT_NEAR(stats_sign_test_greater(0, 8), 1.0, 1e-12);
}

TEST(Stats, GeomeanSkipsNonPositiveAndNaN) {
  EXPECT_NEAR(stats_geomean({1, 4, std::nan(""), 0, -1}), 2.0, 1e-12);
  EXPECT_TRUE(std::isnan(stats_geomean({})));
}

TEST(TableStack, FillsMissingColumnsAndPrefixesKeys) {
  TableStack s;
  s.append({{"job_id", std::string("a")}, {"tp", int64_t{1}}},
           h5::Table().add_column("x", std::vector<double>{1, 2}).add_column("n", std::vector<int32_t>{5, 6}));
  s.append({{"job_id", std::string("b")}, {"tp", int64_t{2}}},
           h5::Table().add_column("x", std::vector<double>{3}).add_column("ok", std::vector<bool>{true}));
  s.append_row({{"job_id", std::string("c")}});
  EXPECT_EQ(s.rows(), 4u);
  const h5::Table t = s.take();
  EXPECT_EQ(t.column_names(), (std::vector<std::string>{"job_id", "tp", "x", "n", "ok"}));
  EXPECT_EQ(t.column<std::string>("job_id"), (std::vector<std::string>{"a", "a", "b", "c"}));
  EXPECT_EQ(t.column<int64_t>("tp"), (std::vector<int64_t>{1, 1, 2, 0}));
  EXPECT_EQ(t.column<int64_t>("n"), (std::vector<int64_t>{5, 6, 0, 0}));  // int32 stored as int64
  EXPECT_EQ(t.column<bool>("ok"), (std::vector<bool>{false, false, true, false}));
  EXPECT_TRUE(std::isnan(t.column<double>("x")[3]));
  EXPECT_EQ(s.rows(), 0u);
}

TEST(TableStack, RejectsTypeClashesAndKeyCollisionsWithoutAppending) {
  TableStack s;
  s.append({{"job_id", std::string("a")}}, h5::Table().add_column("x", std::vector<double>{1}));
  std::string what = expect_error(ErrorKind::kInvalidArgument, [&] {
    s.append({{"job_id", std::string("b")}}, h5::Table().add_column("x", std::vector<std::string>{"oops"}));
  });
  EXPECT_NE(what.find("'x'"), std::string::npos) << what;
  what = expect_error(ErrorKind::kInvalidArgument, [&] {
    s.append({{"x", 1.0}}, h5::Table().add_column("x", std::vector<double>{2}));
  });
  EXPECT_NE(what.find("key"), std::string::npos) << what;
  EXPECT_EQ(s.rows(), 1u);
}

}  // namespace
}  // namespace fk::results
