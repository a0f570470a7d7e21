#include "core/hash.h"

#include <gtest/gtest.h>

namespace fk {
namespace {

// Published FNV-1a 64-bit test values (Fowler/Noll/Vo reference vectors).
TEST(Hasher, Fnv1aReferenceValues) {
  EXPECT_EQ(Hasher().digest(), 0xcbf29ce484222325ull);
  EXPECT_EQ(Hasher().bytes("a", 1).digest(), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Hasher().bytes("foobar", 6).digest(), 0x85944171f73967e8ull);
}

TEST(Hasher, StringsAreLengthPrefixed) {
  EXPECT_NE(Hasher().str("ab").str("c").digest(), Hasher().str("a").str("bc").digest());
  EXPECT_EQ(Hasher().str("x").hex(12).size(), 12u);
  EXPECT_EQ(Hasher().str("x").hex(), Hasher().str("x").hex(16));
}

}  // namespace
}  // namespace fk
