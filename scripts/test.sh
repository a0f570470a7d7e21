#!/usr/bin/env bash
# Builds FastKernels and runs the whole test suite: unit, CLI and multi-rank (mpirun)
# tests (ctest -LE gpu), then the fuzzers briefly, then a Release build of the results
# room against the Open MPI HDF5 package. GPU tests (label gpu) run on a GPU machine:
# bench/gpu/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
scripts/build.sh
ctest --test-dir "${FK_BUILD_DIR:-build}" -LE gpu -j "$(nproc)" --output-on-failure --timeout 600
scripts/fuzz.sh "${FK_FUZZ_SECONDS:-60}"
scripts/check-hdf5-variants.sh
