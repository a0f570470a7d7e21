#!/usr/bin/env bash
# Packs the dependencies the GPU machine lacks (see ../shared/GPU-MACHINE.md: it has
# Open MPI, NCCL, HDF5, yaml-cpp, Boost and GoogleTest but nothing can be installed)
# into .deps/ (git-ignored): CLI11, nlohmann-json, fmt and spdlog headers (used
# header-only there), and OpenBLAS with its runtime libraries. Build there with
# -DFK_DEPS_DIR=$PWD/.deps and LD_LIBRARY_PATH=$PWD/.deps/lib.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .deps && mkdir -p .deps/include .deps/lib
cp -r /usr/include/CLI /usr/include/nlohmann /usr/include/fmt /usr/include/spdlog .deps/include/
cp /usr/include/x86_64-linux-gnu/cblas.h /usr/include/x86_64-linux-gnu/openblas_config.h .deps/include/ 2>/dev/null ||
  cp /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h /usr/include/x86_64-linux-gnu/openblas-pthread/openblas_config.h .deps/include/
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libopenblas.so.0)
cp "$blas" .deps/lib/libopenblas.so.0
ln -sf libopenblas.so.0 .deps/lib/libopenblas.so
for lib in libgfortran.so.5 libquadmath.so.0; do
  src=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')
  [ -n "$src" ] && cp "$(readlink -f "$src")" ".deps/lib/$lib"
done
du -sh .deps
