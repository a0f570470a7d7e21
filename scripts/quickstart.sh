#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs the main job
# on the embedded default: the smoke campaign (tiny dense, MoE and sliding-window models
# in TP/PP layouts) on the CPU backend with a local mpirun. Results land in
# build/smoke/results/ (one HDF5 file per job; docs/results-schema.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build=${FK_BUILD_DIR:-build}
ranks=${FK_RANKS:-4}
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
"$build/orchestrator/fk" validate -q specs/architectures/*.yaml specs/workloads/*.yaml specs/campaigns/*.yaml
mkdir -p "$build/smoke"
"$build/orchestrator/fk" plan specs/campaigns/smoke.yaml --emit "$build/smoke/jobs.json"
mpirun -np "$ranks" --oversubscribe "$build/runner/fk-runner" --jobs "$build/smoke/jobs.json" \
  --results "$build/smoke/results" --force
echo "smoke campaign done: $(ls "$build/smoke/results"/*.h5 | wc -l) job files in $build/smoke/results"
