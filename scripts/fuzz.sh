#!/usr/bin/env bash
# Builds the libFuzzer target for the spec loader with clang (ASan + UBSan) into
# ./build-fuzz and runs it for ${1:-60} seconds over a corpus seeded from specs/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
cxx=${FK_FUZZ_CXX:-clang++-16}
cc=${FK_FUZZ_CC:-clang-16}
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_COMPILER="$cc" -DFK_FUZZ=ON -DFK_CUDA=OFF -DFK_BUILD_BENCH=OFF -DFK_WERROR=OFF \
    $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake --build build-fuzz -j "$(nproc)" --target fk_fuzz_spec
corpus=build-fuzz/corpus
mkdir -p "$corpus"
cp specs/architectures/*.yaml specs/workloads/*.yaml specs/campaigns/*.yaml "$corpus/"
# Run from a scratch folder: campaign inputs resolve references relative to it.
mkdir -p build-fuzz/run && cd build-fuzz/run
../../build-fuzz/tests/fuzz/fk_fuzz_spec -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 ../corpus 2>&1 | tail -n 20
