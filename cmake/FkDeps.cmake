# Third-party dependencies, found with CMake's own modules/configs and wrapped in
# fk::<name> interface targets so the rest of the build never sees version quirks
# (yaml-cpp 0.7 vs 0.8 target names, serial vs Open MPI HDF5, compiled vs header-only
# fmt/spdlog). FK_DEPS_DIR names a folder with include/ (and lib/) used where a
# machine lacks a package (the GPU machine: see scripts/pack-gpu-deps.sh).
include(FkDepsCore)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(MPI REQUIRED COMPONENTS C CXX)

include(FkDepsHdf5)

find_package(Boost 1.74 REQUIRED)
add_library(fk_dep_asio INTERFACE)
target_link_libraries(fk_dep_asio INTERFACE Boost::headers Threads::Threads)
target_compile_definitions(fk_dep_asio INTERFACE BOOST_ASIO_NO_DEPRECATED)
add_library(fk::asio ALIAS fk_dep_asio)

add_library(fk_dep_cli INTERFACE)
find_package(CLI11 QUIET CONFIG)
if(CLI11_FOUND)
  target_link_libraries(fk_dep_cli INTERFACE CLI11::CLI11)
else()
  find_path(FK_CLI11_INCLUDE CLI/CLI.hpp REQUIRED)
  target_include_directories(fk_dep_cli SYSTEM INTERFACE ${FK_CLI11_INCLUDE})
endif()
add_library(fk::cli ALIAS fk_dep_cli)

# BLAS (OpenBLAS preferred) for the CPU GEMM baseline.
add_library(fk_dep_blas INTERFACE)
find_package(OpenBLAS QUIET CONFIG)
if(OpenBLAS_FOUND)
  target_include_directories(fk_dep_blas SYSTEM INTERFACE ${OpenBLAS_INCLUDE_DIRS})
  target_link_libraries(fk_dep_blas INTERFACE ${OpenBLAS_LIBRARIES})
else()
  set(BLA_VENDOR OpenBLAS)
  find_package(BLAS REQUIRED)
  find_path(FK_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas REQUIRED)
  target_include_directories(fk_dep_blas SYSTEM INTERFACE ${FK_CBLAS_INCLUDE})
  target_link_libraries(fk_dep_blas INTERFACE BLAS::BLAS)
endif()
add_library(fk::blas ALIAS fk_dep_blas)

if(FK_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
