#!/usr/bin/env bash
# On the GPU machine (GCC 13, CUDA on): configures and builds every target, tests
# included, in the Debug and Release build types with -Werror (the default build,
# RelWithDebInfo, is bench/gpu/run.sh's), each into its own folder, and says which
# built. Logs go to $OUT. Usage there: bash bench/gpu/build_types.sh [TYPE...]
set -uo pipefail
out=${OUT:-/tmp/fk-gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
gcc --version | head -1
status=0
for type in "${@:-Debug Release}"; do
  for t in $type; do
    dir=build-gpu-$(echo "$t" | tr '[:upper:]' '[:lower:]')
    t0=$(date +%s)
    if ! cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$t" -DFK_DEPS_DIR="$PWD/.deps" > "$out/configure-$t.log" 2>&1; then
      echo "$t: configure failed"; tail -20 "$out/configure-$t.log"; status=1; continue
    fi
    if cmake --build "$dir" -j "$(nproc)" -- -k 0 > "$out/build-$t.log" 2>&1; then
      echo "$t: built in $(( $(date +%s) - t0 )) s"
    else
      echo "$t: FAILED"; grep -E "error|FAILED" -A4 "$out/build-$t.log" | head -40; status=1
    fi
  done
done
exit $status
