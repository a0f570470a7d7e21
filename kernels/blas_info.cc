#include "kernels/blas_info.h"

#include <cblas.h>
#include <fmt/format.h>

namespace fk::kernels {

std::string blas_info() {
  return fmt::format("{} (threads: {})", openblas_get_config(), openblas_get_num_threads());
}

void blas_set_threads(int threads) { openblas_set_num_threads(threads); }

}  // namespace fk::kernels
