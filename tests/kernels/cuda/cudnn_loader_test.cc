// The cuDNN loader (kernels/cuda/cudnn_api.h) needs no GPU: where it looks, what it
// accepts, and the message it gives when it cannot load cuDNN.
#include "kernels/cuda/cudnn_status.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fk::cuda {
namespace {

TEST(CudnnLoader, OffDisablesIt) {
  const CudnnLibrary lib = cudnn_probe("off");
  EXPECT_FALSE(lib.usable());
  EXPECT_EQ(lib.version, 0u);
  EXPECT_NE(lib.error.find("FK_CUDNN_PATH=off"), std::string::npos) << lib.error;
  EXPECT_NE(lib.describe().find("cudnn unavailable"), std::string::npos);
}

TEST(CudnnLoader, MissingFileNamesTheSetting) {
  const CudnnLibrary lib = cudnn_probe("/nonexistent/libcudnn.so.9");
  EXPECT_FALSE(lib.usable());
  EXPECT_NE(lib.error.find("FK_CUDNN_PATH=/nonexistent/libcudnn.so.9"), std::string::npos) << lib.error;
}

TEST(CudnnLoader, DirectoryWithoutTheLibraryNamesBothSonames) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "fk_cudnn_loader_empty";
  std::filesystem::create_directories(dir);
  const CudnnLibrary lib = cudnn_probe(dir.string());
  EXPECT_FALSE(lib.usable());
  EXPECT_NE(lib.error.find("libcudnn.so.9"), std::string::npos) << lib.error;
  EXPECT_NE(lib.error.find("libcudnn_graph.so.9"), std::string::npos) << lib.error;
}

TEST(CudnnLoader, AnotherLibraryIsNotCudnn) {
  const CudnnLibrary lib = cudnn_probe("libm.so.6");
  EXPECT_FALSE(lib.usable());
  EXPECT_NE(lib.error.find("not cuDNN 9"), std::string::npos) << lib.error;
}

#ifdef FK_TEST_CUDNN_LIBRARY
// The library found at configure time loads and is cuDNN 9, by file and by directory.
TEST(CudnnLoader, ConfiguredLibraryIsCudnn9) {
  const std::filesystem::path file = FK_TEST_CUDNN_LIBRARY;
  for (const std::string& setting : {file.string(), file.parent_path().string(), std::string()}) {
    const CudnnLibrary lib = cudnn_probe(setting);
    ASSERT_TRUE(lib.usable()) << "FK_CUDNN_PATH='" << setting << "': " << lib.error;
    EXPECT_GE(lib.version, 90000u);
    EXPECT_LT(lib.version, 100000u);
    EXPECT_NE(lib.describe().find("cudnn 9."), std::string::npos) << lib.describe();
  }
}
#endif

}  // namespace
}  // namespace fk::cuda
