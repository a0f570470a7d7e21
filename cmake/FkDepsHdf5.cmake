# The HDF5 C API behind results/ (fk::hdf5): Debian's libhdf5-dev (serial) or
# libhdf5-openmpi-dev (parallel, needs mpi.h). Included by FkDeps.cmake and by fuzzing
# builds (the job-file reader's fuzz target).
include_guard(GLOBAL)
find_package(HDF5 REQUIRED COMPONENTS C)
add_library(fk_dep_hdf5 INTERFACE)
target_include_directories(fk_dep_hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
target_link_libraries(fk_dep_hdf5 INTERFACE ${HDF5_C_LIBRARIES} ${HDF5_LIBRARIES})
target_compile_definitions(fk_dep_hdf5 INTERFACE ${HDF5_DEFINITIONS} H5_USE_110_API_DEFAULT=0)
if(HDF5_IS_PARALLEL)
  find_package(MPI REQUIRED COMPONENTS C)
  target_link_libraries(fk_dep_hdf5 INTERFACE MPI::MPI_C)
endif()
add_library(fk::hdf5 ALIAS fk_dep_hdf5)
message(STATUS "FastKernels: HDF5 ${HDF5_VERSION} (parallel: ${HDF5_IS_PARALLEL})")
