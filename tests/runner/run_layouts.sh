#!/usr/bin/env bash
# Plans tests/runner/layouts_campaign.yaml and runs all 60 jobs with fk-runner on 4
# ranks (groups of 1, 2 and 4). Usage: run_layouts.sh FK FK_RUNNER MPIEXEC SRC WORK
set -euo pipefail
fk=$1 runner=$2 mpiexec=$3 src=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
"$fk" plan "$src/tests/runner/layouts_campaign.yaml" --emit "$work/jobs.json" > "$work/plan.txt"
"$mpiexec" -np 4 --oversubscribe "$runner" --jobs "$work/jobs.json" --results "$work/results" --flush-bytes 1M
