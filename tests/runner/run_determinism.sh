#!/usr/bin/env bash
# Runs the determinism campaign twice into WORK/a and WORK/b, and once more with the
# fp32 reference's weights streamed (model_stage.reference: streamed) into WORK/streamed.
set -euo pipefail
fk=$1 runner=$2 mpiexec=$3 src=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
"$fk" plan "$src/tests/runner/determinism_campaign.yaml" --emit "$work/jobs.json" > /dev/null
for run in a b; do
  "$mpiexec" -np 4 --oversubscribe "$runner" --jobs "$work/jobs.json" --results "$work/$run" --flush-bytes 1M
done
sed -e "s|^specs_dir: .*|specs_dir: $src/specs|" -e "s|^model_stage: {iterations: 1}|model_stage: {iterations: 1, reference: streamed}|" \
  "$src/tests/runner/determinism_campaign.yaml" > "$work/streamed_campaign.yaml"
grep -q "reference: streamed" "$work/streamed_campaign.yaml"
"$fk" plan "$work/streamed_campaign.yaml" --emit "$work/streamed_jobs.json" > /dev/null
"$mpiexec" -np 4 --oversubscribe "$runner" --jobs "$work/streamed_jobs.json" --results "$work/streamed" --flush-bytes 1M
