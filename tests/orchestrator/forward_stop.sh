#!/usr/bin/env bash
# `fk forward` stops what it started: SIGTERM, its time limit and a second signal each
# end the runner's whole process group (here a stand-in runner, FK_RUNNER, that starts
# a child and sleeps), with fk's exit status saying why. Usage: forward_stop.sh FK SRC WORK
set -uo pipefail
fk=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
tag="fk-forward-stop-$$"
cat > "$work/runner.sh" <<EOS
#!/usr/bin/env bash
# ignores its arguments; a child that would outlive it if its group were not stopped
bash -c 'exec -a $tag-child sleep 300' &
exec -a $tag-runner sleep 300
EOS
chmod +x "$work/runner.sh"
printf 'dummy' > "$work/in.safetensors"
args=(forward "$src/specs/architectures/gpt2.yaml" --inputs "$work/in.safetensors" -o "$work/out.safetensors")
left() { pgrep -f "$tag-" > /dev/null; }
wait_started() {
  for _ in $(seq 100); do pgrep -f "$tag-child" > /dev/null && return 0; sleep 0.1; done
  fail "the stand-in runner never started"
}

# SIGTERM: exit 143, nothing left.
FK_RUNNER=$work/runner.sh "$fk" "${args[@]}" > "$work/term.log" 2>&1 &
pid=$!
wait_started
kill -TERM $pid
wait $pid; rc=$?
[ $rc -eq 143 ] || fail "exited $rc on SIGTERM, expected 143: $(cat "$work/term.log")"
grep -q "stopped by SIGTERM" "$work/term.log" || fail "no message: $(cat "$work/term.log")"
sleep 0.5
left && { pkill -9 -f "$tag-"; fail "SIGTERM left the runner's processes running"; }

# Two signals: the group is killed at once.
FK_RUNNER=$work/runner.sh "$fk" "${args[@]}" > "$work/int.log" 2>&1 &
pid=$!
wait_started
kill -INT $pid; kill -INT $pid
start=$SECONDS
wait $pid; rc=$?
[ $rc -eq 130 ] || fail "exited $rc on SIGINT, expected 130: $(cat "$work/int.log")"
[ $((SECONDS - start)) -lt 5 ] || fail "a second signal did not end it at once"
sleep 0.5
left && { pkill -9 -f "$tag-"; fail "SIGINT left the runner's processes running"; }

# The time limit: exit 3, naming it.
start=$SECONDS
FK_RUNNER=$work/runner.sh "$fk" "${args[@]}" --timeout 1 > "$work/limit.log" 2>&1; rc=$?
[ $rc -eq 3 ] || fail "exited $rc after the time limit, expected 3: $(cat "$work/limit.log")"
grep -q "time limit" "$work/limit.log" || fail "the time limit is not named: $(cat "$work/limit.log")"
[ $((SECONDS - start)) -lt 10 ] || fail "took $((SECONDS - start)) s for a 1 s limit"
left && { pkill -9 -f "$tag-"; fail "the time limit left the runner's processes running"; }

# Bad --timeout: exit 2.
"$fk" "${args[@]}" --timeout -1 > "$work/bad.log" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "exited $rc for --timeout -1, expected 2"
grep -q -- "--timeout" "$work/bad.log" || fail "the bad argument is not named: $(cat "$work/bad.log")"
echo "ok"
