#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs the main job
# on the embedded default: the smoke campaign (tiny dense, MoE and sliding-window models
# in TP/PP layouts) on the CPU backend, through `fk run` with the local executor
# (mpirun), then reports. Results land in build/smoke/ (one HDF5 file per job).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build=${FK_BUILD_DIR:-build}
"$build/orchestrator/fk" validate -q specs/architectures/*.yaml specs/workloads/*.yaml specs/campaigns/*.yaml
rm -rf "$build/smoke"
"$build/orchestrator/fk" run specs/campaigns/smoke.yaml --results "$build/smoke"
# One campaign file and the report (score, verdicts, speedups, precision; HTML charts).
"$build/orchestrator/fk" collect --results "$build/smoke"
"$build/orchestrator/fk" report "$build/smoke/campaign.h5" --html "$build/smoke/report.html"
