#!/usr/bin/env bash
# Runs tests/reports/reports_campaign.yaml four times with fk-runner and collects each
# results folder into a campaign file. Usage: run_campaigns.sh FK FK_RUNNER MPIEXEC SRC WORK
#   WORK/a, WORK/b   two plain runs (fk compare must find nothing between them)
#   WORK/slow        FK_RUNNER_SLOWDOWN=3: every timed region 3 times as long (a fresh-clone
#                    CI run measured an injected 50% as a +17% pack shift beside a's noise)
#   WORK/precision   FK_RUNNER_PRECISION_NOISE: rms_norm outputs off by up to 1% (rel L2
#                    x3.7, still in tolerance), silu_and_mul by up to 10% (out of tolerance)
# a, b and slow take turns job by job (a's job 1, b's job 1, slow's job 1, a's job 2...),
# so that the same job of each run is measured within seconds of the others: runs at
# different times on a shared 2-core machine differ by more than 20%, and runs side by
# side do not share the load evenly (the last job of whichever run ends last runs alone).
# Each turn opens with a run of the same job that is thrown away (WORK/warm): a run
# that follows another job's run times 5-20% slower than one that follows its own job
# (measured here, order a b slow against b a slow, three times each), and a CI run saw
# a's kernels +45% over b's when a always came first.
set -euo pipefail
fk=$1 runner=$2 mpiexec=$3 src=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
"$fk" plan "$src/tests/reports/reports_campaign.yaml" --emit "$work/jobs.json" > "$work/plan.txt"
# Without address randomisation where setarch can turn it off: the same layout in every
# run, so that a kernel's speed does not move with where its buffers land.
no_aslr=()
if setarch "$(uname -m)" -R true 2> /dev/null; then no_aslr=(setarch "$(uname -m)" -R); fi
run() {  # run NAME ONLY [VARIABLE=VALUE]: the variable is set for every rank (mpirun -x)
  local name=$1 only=$2
  local forward=() select=()
  if [ $# -gt 2 ]; then
    export "$3"
    forward=(-x "${3%%=*}")
  fi
  [ -n "$only" ] && select=(--only "$only")
  "${no_aslr[@]}" "$mpiexec" -np 2 --oversubscribe "${forward[@]}" "$runner" --jobs "$work/jobs.json" \
    --results "$work/$name" --flush-bytes 1M "${select[@]}" >> "$work/$name.log" 2>&1
}
ids=$(python3 -c 'import json, sys; print(" ".join(j["id"] for j in json.load(open(sys.argv[1]))["jobs"]))' \
  "$work/jobs.json")
status=0
for id in $ids; do
  run warm "$id" || status=1
  run a "$id" || status=1
  run b "$id" || status=1
  (run slow "$id" FK_RUNNER_SLOWDOWN=3) || status=1
done
(run precision "" FK_RUNNER_PRECISION_NOISE=rms_norm:0.01,silu_and_mul:0.1) || status=1
if [ $status -ne 0 ]; then
  tail -n 20 "$work"/*.log >&2
  exit 1
fi
for name in a b slow precision; do
  "$fk" collect --results "$work/$name" > "$work/$name.collect.txt"
done
cat "$work"/*.collect.txt
