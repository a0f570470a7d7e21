#!/usr/bin/env bash
# Runs tests/reports/reports_campaign.yaml four times with fk-runner and collects each
# results folder into a campaign file. Usage: run_campaigns.sh FK FK_RUNNER MPIEXEC SRC WORK
#   WORK/a, WORK/b   two plain runs (fk compare must find nothing between them)
#   WORK/slow        FK_RUNNER_SLOWDOWN=1.2: every timed region 20% longer
#   WORK/precision   FK_RUNNER_PRECISION_NOISE: rms_norm outputs off by up to 1% (rel L2
#                    x3.7, still in tolerance), silu_and_mul by up to 10% (out of tolerance)
# a, b and slow run at the same time, so they share whatever load the machine has:
# runs at different times on a shared 2-core machine differ by more than 20%.
set -euo pipefail
fk=$1 runner=$2 mpiexec=$3 src=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
"$fk" plan "$src/tests/reports/reports_campaign.yaml" --emit "$work/jobs.json" > "$work/plan.txt"
run() {  # run NAME [VARIABLE=VALUE]: the variable is set for every rank (mpirun -x)
  local name=$1
  local forward=()
  if [ $# -gt 1 ]; then
    export "$2"
    forward=(-x "${2%%=*}")
  fi
  "$mpiexec" -np 2 --oversubscribe "${forward[@]}" "$runner" --jobs "$work/jobs.json" \
    --results "$work/$name" --flush-bytes 1M > "$work/$name.log" 2>&1
}
pids=()
run a & pids+=($!)
run b & pids+=($!)
(run slow FK_RUNNER_SLOWDOWN=1.2) & pids+=($!)
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
(run precision FK_RUNNER_PRECISION_NOISE=rms_norm:0.01,silu_and_mul:0.1) || status=1
if [ $status -ne 0 ]; then
  tail -n 20 "$work"/*.log >&2
  exit 1
fi
for name in a b slow precision; do
  "$fk" collect --results "$work/$name" > "$work/$name.collect.txt"
done
cat "$work"/*.collect.txt
