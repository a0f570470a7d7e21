#!/usr/bin/env bash
# End-to-end tests of `fk run` with the local executor (mpirun). Usage:
#   run_e2e.sh FK SRC WORK CASE
# CASE: smoke | kill9_resume | kill_rank | lock | sigterm | hang | quarantine
set -uo pipefail
fk=$1 src=$2 work=$3 case=$4
campaign=$src/tests/orchestrator/orch_campaign.yaml
res=$work/$case
rm -rf "$res" && mkdir -p "$work"
fail() { echo "FAIL ($case): $*"; [ -f "$res/.fk-journal.jsonl" ] && tail -5 "$res/.fk-journal.jsonl"; exit 1; }
count() { ls "$res"/*.h5 2>/dev/null | wc -l; }
has_files() { [ "$(count)" -ge "$1" ]; }
planned=$("$fk" plan "$campaign" --json | grep -c '"id"')
[ "$planned" -ge 4 ] || fail "planned $planned jobs"
wait_for() {  # wait_for SECONDS COMMAND...
  local t=$1; shift
  for _ in $(seq $((t * 5))); do "$@" && return 0; sleep 0.2; done
  return 1
}
case $case in
  smoke)
    "$fk" run "$campaign" --results "$res" --plain || fail "fk run exited $?"
    [ "$(count)" -eq "$planned" ] || fail "$(count) job files, expected $planned"
    "$fk" status --results "$res" | grep -q "done $planned, failed 0" || fail "fk status disagrees"
    ;;
  kill9_resume)
    "$fk" run "$campaign" --results "$res" --plain > "$work/$case.log" 2>&1 &
    pid=$!
    wait_for 120 has_files 1 || fail "no job finished"
    kill -9 $pid; wait $pid 2>/dev/null
    before=$(count)
    [ "$before" -lt "$planned" ] || fail "every job finished before the kill: nothing to resume"
    out=$("$fk" run "$campaign" --results "$res" --plain 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q "continue it with --resume" <<<"$out" || fail "rerun without --resume not refused ($rc): $out"
    "$fk" run "$campaign" --results "$res" --plain --resume || fail "resume exited $?"
    [ "$(count)" -eq "$planned" ] || fail "$(count) job files after resume, expected $planned"
    # Every job exactly once, and no job that was done before the kill ran again.
    launches=$(grep -c '"event":"launch"' "$res/.fk-journal.jsonl")
    done_events=$(grep '"decision":"done"' "$res/.fk-journal.jsonl" | sed 's/.*"job":"\([0-9a-f]*\)".*/\1/' | sort | uniq -d | wc -l)
    [ "$done_events" -eq 0 ] || fail "a job completed twice"
    echo "ok: $before done before the kill, $launches launches in all"
    ;;
  kill_rank)
    # A rank killed while MPI starts up can leave its peer waiting (mpirun does not always
    # notice then): the heartbeat timeout catches that case, kept short here.
    "$fk" run "$campaign" --results "$res" --plain --heartbeat-timeout 20 > "$work/$case.log" 2>&1 &
    pid=$!
    # Kill one rank of this campaign (not of another test's: ctest runs tests side by
    # side) as soon as two run. A rank's command line starts with fk-runner's path
    # (mpirun's starts with mpirun) and names this results folder.
    ranks="^[^ ]*fk-runner --jobs $res/"
    wait_for 120 sh -c "pgrep -f '$ranks' | wc -l | grep -qv '^[01]$'" || fail "no 2-rank job seen"
    victim=$(pgrep -f "$ranks" | tail -1)
    kill -9 "$victim"
    wait $pid; rc=$?
    [ $rc -eq 0 ] || fail "fk run exited $rc: $(tail -5 "$work/$case.log")"
    [ "$(count)" -eq "$planned" ] || fail "$(count) job files, expected $planned"
    grep -q '"decision":"retry"' "$res/.fk-journal.jsonl" || fail "no attempt was retried"
    ;;
  lock)
    FK_RUNNER_FAULT=hang:0 "$fk" run "$campaign" --results "$res" --plain > "$work/$case.log" 2>&1 &
    pid=$!
    wait_for 60 test -s "$res/.fk-lock" || fail "no lock taken"
    out=$("$fk" run "$campaign" --results "$res" --resume --plain 2>&1); rc=$?
    kill -TERM $pid; wait $pid
    [ $rc -eq 2 ] || fail "second fk run exited $rc"
    grep -q "is in use by another fk run (pid $pid" <<<"$out" || fail "no polite refusal: $out"
    ;;
  sigterm)
    FK_RUNNER_FAULT=hang:0 "$fk" run "$campaign" --results "$res" --plain > "$work/$case.log" 2>&1 &
    pid=$!
    wait_for 60 grep -q '"event":"launch"' "$res/.fk-journal.jsonl" || fail "nothing launched"
    sleep 1
    kill -TERM $pid; wait $pid; rc=$?
    [ $rc -eq 143 ] || fail "exited $rc on SIGTERM, expected 143"
    grep -q '"event":"interrupted"' "$res/.fk-journal.jsonl" || fail "interruption not journaled"
    sleep 1
    pgrep -f "fk-runner.*$res" > /dev/null && fail "runner processes left behind"
    "$fk" run "$campaign" --results "$res" --plain --resume || fail "resume after SIGTERM exited $?"
    [ "$(count)" -eq "$planned" ] || fail "$(count) job files, expected $planned"
    ;;
  hang)
    # Rank 0 of the first attempt of every job hangs; silence stops it after 6 s, the retry runs.
    FK_RUNNER_FAULT=hang:0:a1 "$fk" run "$campaign" --results "$res" --plain --heartbeat-timeout 6 || fail "fk run exited $?"
    [ "$(count)" -eq "$planned" ] || fail "$(count) job files"
    grep -q 'no heartbeat for' "$res/.fk-journal.jsonl" || fail "hang not detected by heartbeat"
    ;;
  failure_once)
    FK_RUNNER_FAULT=job:0:a1 "$fk" run "$campaign" --results "$res" --plain || fail "fk run exited $?"
    [ "$(count)" -eq "$planned" ] || fail "$(count) job files"
    [ "$(grep -c '"decision":"retry"' "$res/.fk-journal.jsonl")" -eq "$planned" ] || fail "expected one retry per job"
    ;;
  give_up)
    FK_RUNNER_FAULT=job:0 "$fk" run "$campaign" --results "$res" --plain --retries 1; rc=$?
    [ $rc -eq 1 ] || fail "exited $rc, expected 1"
    [ "$(grep -c '"decision":"give_up"' "$res/.fk-journal.jsonl")" -eq "$planned" ] || fail "jobs not given up"
    st=$("$fk" status --results "$res"); src=$?
    [ $src -eq 1 ] || fail "fk status exited $src with failed jobs"
    grep -q "failed: job" <<<"$st" || fail "fk status does not list the failures: $st"
    ;;
  *) fail "unknown case" ;;
esac
echo "ok: $case"
