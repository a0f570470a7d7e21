#!/usr/bin/env bash
# Runs `fk check` on bench/hostile/busy_helper_cpu N times (default 10) and counts its
# verdicts (the figures of bench/RESULTS.md, "The scaling campaign on the CPU backend").
# With SATURATE=1, two busy loops hold the host's cores meanwhile.
# Usage: bench/hostile/run_busy_helper.sh BUILD_DIR [N]
set -uo pipefail
build=$1 n=${2:-10}
src=$(cd "$(dirname "$0")/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
burners=()
if [ "${SATURATE:-0}" = 1 ]; then
  for _ in $(seq "$(nproc)"); do bash -c 'while :; do :; done' & burners+=($!); done
fi
for i in $(seq "$n"); do
  out=$(mktemp -d)
  "$build/orchestrator/fk" check "$src/bench/hostile/busy_helper_cpu" --backend cpu --arch "$src/tests/candidates/llama-32-layers.yaml" \
    --scale tiny --results "$out" 2>&1 |
    awk '$6 == "attn.norm" && $7 ~ /tokens=64/ {print $9; exit}'
  rm -rf "$out"
done | sort | uniq -c
[ ${#burners[@]} -gt 0 ] && kill "${burners[@]}"
exit 0
