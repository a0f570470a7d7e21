#!/usr/bin/env bash
# Builds everything that includes HDF5 (the results room and fk-runner) against
# Debian's Open MPI HDF5 (libhdf5-openmpi-dev) too, into build-hdf5-openmpi/: the
# project must build against both the serial and the parallel package.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d /usr/include/hdf5/openmpi ]; then
  echo "check-hdf5-variants: libhdf5-openmpi-dev is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
dir=build-hdf5-openmpi
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" -G Ninja -DHDF5_PREFER_PARALLEL=ON -DFK_CUDA=OFF -DFK_BUILD_TESTS=OFF -DFK_BUILD_BENCH=OFF \
    $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) > "$dir.configure.log"
fi
cmake --build "$dir" -j "$(nproc)" --target fk_results_job fk-runner
echo "check-hdf5-variants: built against $(grep 'FastKernels: HDF5' "$dir.configure.log" | sed 's/-- //')"
