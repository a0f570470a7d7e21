#!/usr/bin/env bash
# Builds the product (every target but the tests) against Debian's Open MPI HDF5
# (libhdf5-openmpi-dev) too, into build-hdf5-openmpi/, as a Release build: the project
# must build against both the serial and the parallel package, and in every build type
# with -Werror (the main build is RelWithDebInfo; GCC at -O3 warns where -O2 does not).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d /usr/include/hdf5/openmpi ]; then
  echo "check-hdf5-variants: libhdf5-openmpi-dev is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
dir=build-hdf5-openmpi
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHDF5_PREFER_PARALLEL=ON -DFK_CUDA=OFF \
    -DFK_BUILD_TESTS=OFF -DFK_BUILD_BENCH=OFF \
    $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) > "$dir.configure.log"
fi
cmake --build "$dir" -j "$(nproc)"
echo "check-hdf5-variants: Release build against $(grep 'FastKernels: HDF5' "$dir.configure.log" | sed 's/-- //')"
