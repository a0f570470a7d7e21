#!/usr/bin/env bash
# Runs the determinism campaign twice into WORK/a and WORK/b.
set -euo pipefail
fk=$1 runner=$2 mpiexec=$3 src=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
"$fk" plan "$src/tests/runner/determinism_campaign.yaml" --emit "$work/jobs.json" > /dev/null
for run in a b; do
  "$mpiexec" -np 4 --oversubscribe "$runner" --jobs "$work/jobs.json" --results "$work/$run" --flush-bytes 1M
done
