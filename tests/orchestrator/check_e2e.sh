#!/usr/bin/env bash
# End-to-end tests of `fk check`'s supervision of fk-runner. Usage:
#   check_e2e.sh FK SRC WORK CASE
# CASE: later_job_fails | hang | sigterm
# Two jobs of one rank (tp1) run before two of two ranks (tp2); FK_RUNNER_FAULT=<kind>:1
# hits group rank 1, so only the tp2 jobs fail or hang and the tp1 jobs finish.
set -uo pipefail
fk=$1 src=$2 work=$3 case=$4
res=$work/$case
rm -rf "$res" && mkdir -p "$res"
export FK_CACHE_DIR=$work/cache
fail() { echo "FAIL ($case): $*"; exit 1; }
check=("$fk" check "$src/candidates/rms_norm/cpu" --arch llama-3.1-8b --scale tiny --layout tp1 --layout tp2
       --results "$res" -q --rounds 1 --iterations 2 --time-limit 20)
# The per-job table lists the finished tp1 jobs and no tp2 job.
table_shows_tp1() {
  sed -n '/^per job/,$p' <<<"$1" | grep -Eq "llama-3.1-8b +tiny +tp1" || return 1
  ! sed -n '/^per job/,$p' <<<"$1" | grep -Eq "llama-3.1-8b +tiny +tp2"
}
case $case in
  later_job_fails)
    out=$(FK_RUNNER_FAULT=job:1 timeout 300 "${check[@]}" 2>&1); rc=$?
    [ $rc -eq 1 ] || fail "exited $rc, expected 1: $out"
    table_shows_tp1 "$out" || fail "no table of the jobs that finished: $out"
    [ "$(grep -c "did not finish: no" <<<"$out")" -eq 2 ] || fail "the two tp2 jobs are not named: $out"
    ;;
  hang)
    start=$SECONDS
    out=$(FK_RUNNER_FAULT=hang:1 timeout 300 "${check[@]}" --heartbeat-timeout 8 2>&1); rc=$?
    [ $rc -eq 1 ] || fail "exited $rc, expected 1 (124: fk check hung): $out"
    grep -q "no heartbeat for" <<<"$out" || fail "hang not stopped by the heartbeat watch: $out"
    table_shows_tp1 "$out" || fail "no table of the jobs that finished: $out"
    [ $((SECONDS - start)) -lt 200 ] || fail "took $((SECONDS - start)) s"
    ;;
  sigterm)
    FK_RUNNER_FAULT=hang:0 "${check[@]}" > "$work/$case.log" 2>&1 &
    pid=$!
    for _ in $(seq 600); do pgrep -f "fk-runner --jobs $res/" > /dev/null && break; sleep 0.2; done
    pgrep -f "fk-runner --jobs $res/" > /dev/null || fail "fk-runner never started: $(cat "$work/$case.log")"
    sleep 1
    kill -TERM $pid; wait $pid; rc=$?
    [ $rc -eq 143 ] || fail "exited $rc on SIGTERM, expected 143: $(tail -5 "$work/$case.log")"
    sleep 1
    if pgrep -f "$res/" > /dev/null; then
      pgrep -af "$res/"
      pgrep -f "$res/" | xargs -r kill -9  # this test's own leftovers only
      fail "mpirun or fk-runner left behind"
    fi
    ;;
  *) fail "unknown case" ;;
esac
echo "ok: $case"
