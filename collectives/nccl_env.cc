#include "collectives/nccl_env.h"

#include "core/error.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace fk::collectives {

void nccl_apply_env_policy() {
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  const char* current = std::getenv("NCCL_NVLS_ENABLE");
  if (current != nullptr && std::strcmp(current, "0") == 0) return;
  if (setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/1) != 0)
    fail(ErrorKind::kRuntime, "nccl: cannot set NCCL_NVLS_ENABLE=0: {}", std::strerror(errno));
}

}  // namespace fk::collectives
