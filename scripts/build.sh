#!/usr/bin/env bash
# Configures and builds FastKernels into ./build (or $FK_BUILD_DIR). Extra arguments
# go to CMake (e.g. -DFK_CUDA=OFF). Uses ccache and Ninja.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FK_BUILD_DIR:-build}
jobs=${FK_JOBS:-$(nproc)}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja "${launcher[@]}" "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B "$build" "$@"
fi
cmake --build "$build" -j "$jobs"
