#!/usr/bin/env bash
# Orchestrator overhead per job with the local executor: the same small campaign
# (tests/orchestrator/orch_campaign.yaml, 4 tiny jobs of 1-2 ranks) run (a) by fk run
# (one mpirun per job attempt, supervision, journal, heartbeats) and (b) directly by
# one fk-runner under one mpirun (the reference), 3 times each; prints medians.
# Usage: bench/orchestrator_overhead.sh [build dir]
set -euo pipefail
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
campaign=$src/tests/orchestrator/orch_campaign.yaml
"$build/orchestrator/fk" plan "$campaign" --emit "$work/jobs.json" > /dev/null
jobs=$(grep -c '"id":' "$work/jobs.json" || true)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
fk_times=(); direct_times=()
for i in 1 2 3; do
  s=$(date +%s.%N); "$build/orchestrator/fk" run "$campaign" --results "$work/fk$i" --plain > /dev/null; e=$(date +%s.%N)
  fk_times+=("$(echo "$e - $s" | bc)")
  s=$(date +%s.%N); mpirun -np 2 "$build/runner/fk-runner" --jobs "$work/jobs.json" --results "$work/direct$i" > /dev/null; e=$(date +%s.%N)
  direct_times+=("$(echo "$e - $s" | bc)")
done
fk=$(printf '%s\n' "${fk_times[@]}" | median); direct=$(printf '%s\n' "${direct_times[@]}" | median)
echo "jobs: 4; fk run median ${fk} s; direct fk-runner median ${direct} s; overhead per job $(echo "scale=2; ($fk - $direct) / 4" | bc) s"
rm -rf "$work"
