// The cuBLASLt loader (kernels/cuda/cublaslt_api.h) needs no GPU: the library is not
// loaded until a matmul asks for it, where it looks, what it accepts, and the message it
// gives when it cannot load cuBLASLt. ctest runs each test in its own process.
#include "kernels/cuda/cublaslt_api.h"

#include "core/error.h"

#include <gtest/gtest.h>
#include <link.h>

#include <filesystem>
#include <string>

namespace fk::cuda {
namespace {

// Whether an object whose path holds "libcublasLt" is mapped into this process.
bool cublaslt_mapped() {
  bool found = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && std::string(info->dlpi_name).find("libcublasLt") != std::string::npos)
          *static_cast<bool*>(data) = true;
        return 0;
      },
      &found);
  return found;
}

// Linked into the CUDA backend, cuBLASLt's initialisers would cost every process about
// 0.4 s at start: it must come only with the first use.
TEST(CublasLtLoader, NotLoadedUntilAsked) {
  EXPECT_FALSE(cublaslt_mapped()) << "libcublasLt is loaded at process start: is it linked again?";
#ifdef FK_TEST_CUBLASLT_LIBRARY
  ASSERT_TRUE(cublaslt_library().usable()) << cublaslt_library().error;
  EXPECT_NE(cublaslt_api().matmul, nullptr);
  EXPECT_TRUE(cublaslt_mapped());
#endif
}

TEST(CublasLtLoader, MissingFileNamesTheSetting) {
  const CublasLtLibrary lib = cublaslt_probe("/nonexistent/libcublasLt.so.13");
  EXPECT_FALSE(lib.usable());
  EXPECT_NE(lib.error.find("FK_CUBLASLT_PATH=/nonexistent/libcublasLt.so.13"), std::string::npos) << lib.error;
  EXPECT_NE(lib.describe().find("cublasLt unavailable"), std::string::npos) << lib.describe();
}

TEST(CublasLtLoader, AnotherLibraryIsNotCublasLt) {
  const CublasLtLibrary lib = cublaslt_probe("libm.so.6");
  EXPECT_FALSE(lib.usable());
  EXPECT_NE(lib.error.find("has no cublasLtGetVersion: not cuBLASLt"), std::string::npos) << lib.error;
}

#ifdef FK_TEST_CUBLASLT_LIBRARY
// The library found at configure time loads, by its path and by default, and has the
// headers' major version.
TEST(CublasLtLoader, ConfiguredLibraryLoads) {
  for (const std::string& setting : {std::string(FK_TEST_CUBLASLT_LIBRARY), std::string()}) {
    const CublasLtLibrary lib = cublaslt_probe(setting);
    ASSERT_TRUE(lib.usable()) << "FK_CUBLASLT_PATH='" << setting << "': " << lib.error;
    EXPECT_EQ(lib.version / 10000, static_cast<size_t>(CUBLAS_VER_MAJOR));
    EXPECT_NE(lib.describe().find("cublasLt " + std::to_string(CUBLAS_VER_MAJOR) + "."), std::string::npos)
        << lib.describe();
  }
}
#endif

}  // namespace
}  // namespace fk::cuda
