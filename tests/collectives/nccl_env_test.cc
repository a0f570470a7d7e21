// The NCCL environment policy (no GPU needed): NVLink multicast is forced off whatever
// NCCL_NVLS_ENABLE held before, and never turned on.
#include "collectives/nccl_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace fk::collectives {
namespace {

std::string nvls() {
  const char* v = std::getenv("NCCL_NVLS_ENABLE");
  return v == nullptr ? "<unset>" : v;
}

TEST(NcclEnv, UnsetBecomesZero) {
  unsetenv("NCCL_NVLS_ENABLE");
  nccl_apply_env_policy();
  EXPECT_EQ(nvls(), "0");
}

TEST(NcclEnv, OneIsOverwrittenWithZero) {
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  nccl_apply_env_policy();
  EXPECT_EQ(nvls(), "0");
  for (const char* other : {"2", "true", "", " 0"}) {
    setenv("NCCL_NVLS_ENABLE", other, 1);
    nccl_apply_env_policy();
    EXPECT_EQ(nvls(), "0") << "was '" << other << "'";
  }
}

TEST(NcclEnv, ZeroStaysAndRepeatedCallsAreHarmless) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  nccl_apply_env_policy();
  nccl_apply_env_policy();
  EXPECT_EQ(nvls(), "0");
}

}  // namespace
}  // namespace fk::collectives
