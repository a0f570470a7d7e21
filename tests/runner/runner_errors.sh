#!/usr/bin/env bash
# Bad input to fk-runner: a clear message from one rank, the documented exit status,
# every rank gone (no hang: each call runs under `timeout`).
set -uo pipefail
fk=$1 runner=$2 mpiexec=$3 src=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
failures=0
expect() {  # expect STATUS NEEDLE -- command...
  local want=$1 needle=$2; shift 3
  local out rc
  out=$(timeout 120 "$@" 2>&1); rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$needle" <<<"$out"; then
    echo "FAIL: '$*' exited $rc (want $want), output lacks '$needle':"; echo "$out" | head -20
    failures=$((failures + 1))
  else
    local lines
    lines=$(grep -cF -- "$needle" <<<"$out")
    if [ "$lines" -ne 1 ]; then echo "FAIL: '$needle' printed $lines times (want once, by one rank)"; failures=$((failures + 1)); fi
  fi
}
printf '{not json' > "$work/garbage.json"
expect 2 "garbage.json: not valid JSON" -- "$mpiexec" -np 3 --oversubscribe "$runner" --jobs "$work/garbage.json" --results "$work/r"
"$fk" plan "$src/tests/runner/determinism_campaign.yaml" --emit "$work/jobs.json" > /dev/null
expect 2 "needs 4 ranks (tp2pp2dp1), but fk-runner was started with 2" -- "$mpiexec" -np 2 --oversubscribe "$runner" --jobs "$work/jobs.json" --results "$work/r"
expect 2 "--results is required" -- "$mpiexec" -np 2 --oversubscribe "$runner" --jobs "$work/jobs.json"
expect 2 "--only nosuchjob: no such job" -- "$mpiexec" -np 2 --oversubscribe "$runner" --jobs "$work/jobs.json" --results "$work/r" --only nosuchjob
expect 2 "--bogus" -- "$mpiexec" -np 2 --oversubscribe "$runner" --bogus
sed 's/"hidden_size": 128/"hidden_size": "big"/' "$work/jobs.json" > "$work/edited.json"
expect 2 "/hidden_size: expected an integer" -- "$mpiexec" -np 4 --oversubscribe "$runner" --jobs "$work/edited.json" --results "$work/r"
grep -q '"architectures": {' "$work/jobs.json" || { echo "FAIL: no architecture table in $work/jobs.json"; failures=$((failures + 1)); }
# A job naming no table entry, and a job file of an older format: refused, exit 2.
sed 's/"architecture":"mixtral-8x7b@tiny#[0-9a-f]*"/"architecture":"gone"/' "$work/jobs.json" > "$work/dangling.json"
expect 2 "/jobs/0/architecture: job '" -- "$mpiexec" -np 2 --oversubscribe "$runner" --jobs "$work/dangling.json" --results "$work/r"
expect 2 "refers to architecture 'gone', which the table /architectures does not hold" -- "$mpiexec" -np 2 --oversubscribe "$runner" --jobs "$work/dangling.json" --results "$work/r"
sed 's/"version": 2/"version": 1/' "$work/jobs.json" > "$work/v1.json"
expect 2 "v1.json: /version: job file version 1 is not supported" -- "$mpiexec" -np 2 --oversubscribe "$runner" --jobs "$work/v1.json" --results "$work/r"
# A job on the cuda backend where no rank can use a GPU (none visible, or no CUDA in the
# build): refused before any job starts, by one rank, naming why; exit 2.
{ cat "$src/tests/runner/determinism_campaign.yaml"; echo "backend: cuda"; } |
  sed "s|^specs_dir: .*|specs_dir: $src/specs|" > "$work/cuda_campaign.yaml"
"$fk" plan "$work/cuda_campaign.yaml" --emit "$work/cuda.json" > /dev/null
expect 2 "asks for the cuda backend, which this rank (rank 0) cannot run:" -- env CUDA_VISIBLE_DEVICES= \
  "$mpiexec" -np 4 --oversubscribe -x CUDA_VISIBLE_DEVICES "$runner" --jobs "$work/cuda.json" --results "$work/r"
# A rank that fails during a job: its message, exit status 3, all ranks stopped.
expect 3 "injected fault" -- env FK_RUNNER_FAULT=job:1 "$mpiexec" -np 4 --oversubscribe "$runner" --jobs "$work/jobs.json" --results "$work/r"
if [ -n "$(ls "$work/r" 2>/dev/null | grep -v '\.h5$')" ]; then echo "FAIL: stray temporary files in $work/r"; failures=$((failures + 1)); fi
# A full disk as the results are written (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with
# EFBIG): an I/O error, exit 6 — never a crash (4, which would quarantine a candidate).
expect 6 "I/O error: $work/full/" -- "$mpiexec" -np 4 --oversubscribe \
  sh -c 'ulimit -f 64; trap "" XFSZ; exec "$0" "$@"' "$runner" --jobs "$work/jobs.json" --results "$work/full"
if [ -n "$(ls "$work/full" 2>/dev/null)" ]; then echo "FAIL: files left in $work/full"; failures=$((failures + 1)); fi
exit $failures
