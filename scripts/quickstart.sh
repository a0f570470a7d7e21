#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs the main
# job on the embedded default, the smoke campaign (CPU backend). Today that job is
# planning the campaign (`fk plan`); it becomes `fk run` when the runner lands.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build=${FK_BUILD_DIR:-build}
"$build/orchestrator/fk" validate specs/architectures/*.yaml specs/workloads/*.yaml specs/campaigns/*.yaml
"$build/orchestrator/fk" plan specs/campaigns/smoke.yaml --emit "$build/smoke-jobs.json"
