#!/usr/bin/env bash
# Builds FastKernels and runs the whole test suite: unit, multi-rank (mpirun), CLI and
# Slurm tests (ctest -LE gpu), then the spec-loader fuzzer briefly. GPU tests (label
# gpu) run on a GPU machine with: ctest --test-dir build -L gpu.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
scripts/build.sh
ctest --test-dir "${FK_BUILD_DIR:-build}" -LE gpu -j "$(nproc)" --output-on-failure --timeout 600
scripts/fuzz.sh "${FK_FUZZ_SECONDS:-60}"
