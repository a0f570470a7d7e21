#!/usr/bin/env bash
# Builds the results room (results/: the only code that includes hdf5.h or links
# libhdf5, and the core it builds on) against Debian's Open MPI HDF5
# (libhdf5-openmpi-dev) too, into build-hdf5-openmpi/, as a Release build with -Werror:
# the project must build against both the serial and the parallel package (the main
# build, scripts/build.sh, takes the serial one), and GCC at -O3 warns where the main
# build's -O2 does not. Only those targets: the rest of the tree does not see HDF5, and
# rebuilding all of it here cost CI about 8 minutes of its 40.
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
if ! grep -q 'FastKernels: HDF5.*parallel: TRUE' "$dir.configure.log"; then
  echo "check-hdf5-variants: the configure did not pick the parallel (Open MPI) HDF5 ($dir.configure.log says:" \
    "$(grep 'FastKernels: HDF5' "$dir.configure.log" || echo 'nothing about HDF5'))" >&2
  exit 1
fi
cmake --build "$dir" -j "$(nproc)" --target fk_results fk_results_job fk_results_campaign
echo "check-hdf5-variants: results room built (Release) against $(grep 'FastKernels: HDF5' "$dir.configure.log" | sed 's/-- //')"
