// Counter-based RNG: known-answer vectors, determinism, and TP-shard generation.
#include "core/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace fk {
namespace {

// Known-answer vectors for Philox4x32-10 from the Random123 distribution (kat_vectors).
TEST(Philox, KnownAnswerVectors) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(RngStream, ValueDependsOnlyOnSeedNameAndIndex) {
  RngStream a(42, "layers.0.wq"), b(42, "layers.0.wq");
  for (uint64_t i : {0ull, 1ull, 1000ull, (1ull << 40) + 3}) {
    EXPECT_EQ(a.uniform01(i), b.uniform01(i));
  }
  // Reverse order gives the same values (no hidden state).
  std::vector<float> fwd, rev;
  for (uint64_t i = 0; i < 100; ++i) fwd.push_back(a.uniform01(i));
  for (uint64_t i = 100; i-- > 0;) rev.push_back(a.uniform01(i));
  std::reverse(rev.begin(), rev.end());
  EXPECT_EQ(fwd, rev);
}

TEST(RngStream, DifferentNamesAndSeedsGiveDifferentStreams) {
  std::set<float> firsts;
  for (uint64_t seed : {1ull, 2ull})
    for (const char* name : {"a", "b", "layers.0.wq", "layers.1.wq"}) firsts.insert(RngStream(seed, name).uniform01(0));
  EXPECT_EQ(firsts.size(), 8u);
}

TEST(RngStream, UniformIsInRangeAndUnbiased) {
  RngStream r(7, "stats");
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const float u = r.uniform01(static_cast<uint64_t>(i));
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
    sq += static_cast<double>(u) * u;
  }
  const double mean = sum / n, var = sq / n - mean * mean;
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(var, 1.0 / 12, 0.002);
  const float x = r.uniform(5, -2.0f, 2.0f);
  EXPECT_GE(x, -2.0f);
  EXPECT_LT(x, 2.0f);
}

TEST(RngStream, NormalHasUnitMoments) {
  RngStream r(9, "normal");
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double z = r.normal(static_cast<uint64_t>(i));
    ASSERT_TRUE(std::isfinite(z));
    sum += z;
    sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.02);
}

// A TP shard (column block) and a PP-style row block, generated alone, equal the
// matching block of the full tensor.
TEST(RngFill, ShardsEqualTheMatchingBlockOfTheFullTensor) {
  RngStream r(123, "w");
  const std::vector<int64_t> shape{6, 10, 7};
  ShardBox full = ShardBox::whole(shape);
  std::vector<float> all(static_cast<size_t>(full.numel()));
  rng_fill_uniform(r, full, -1.0f, 1.0f, all);
  for (const auto& [offset, extent] :
       std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{0, 5, 0}, {6, 5, 7}},     // second half of dim 1 (a column-parallel shard)
           {{2, 0, 0}, {3, 10, 7}},    // rows 2..4
           {{1, 3, 2}, {4, 6, 5}},     // an interior box
           {{5, 9, 6}, {1, 1, 1}}}) {  // one element
    ShardBox box{shape, offset, extent};
    std::vector<float> part(static_cast<size_t>(box.numel()));
    rng_fill_uniform(r, box, -1.0f, 1.0f, part);
    size_t k = 0;
    for (int64_t i = 0; i < extent[0]; ++i)
      for (int64_t j = 0; j < extent[1]; ++j)
        for (int64_t l = 0; l < extent[2]; ++l) {
          const int64_t g = ((offset[0] + i) * shape[1] + (offset[1] + j)) * shape[2] + (offset[2] + l);
          ASSERT_EQ(part[k++], all[static_cast<size_t>(g)]);
        }
  }
}

}  // namespace
}  // namespace fk
