// Which BLAS the CPU baselines use, for the provenance recorded with results.
#pragma once

#include <string>

namespace fk::kernels {

// "OpenBLAS 0.3.21 ... (threads: 2)".
std::string blas_info();
// Sets the BLAS library's thread count (OpenBLAS); no-op for other BLAS.
void blas_set_threads(int threads);

}  // namespace fk::kernels
