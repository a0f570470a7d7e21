#!/usr/bin/env bash
# slurm/nightly.sh with a stub `fk` that records its calls: the steps run in order with
# the documented arguments, a second night is compared with the first, `latest`
# follows, a regression (fk compare exits 1) makes the script fail, a rerun of the same
# night resumes, and failed jobs alone give status 1.
set -uo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
failures=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if ! "$@"; then echo "FAIL: $what"; failures=$((failures + 1)); fi
}

cat > "$work/fk" <<'EOF'
#!/usr/bin/env bash
# Stub fk: logs the call; `run` leaves a journal, `collect` the campaign file; exit
# statuses from FK_STUB_RUN / FK_STUB_COMPARE.
echo "$*" >> "$FK_STUB_LOG"
case "$1" in
  run) results=""; while [ $# -gt 0 ]; do [ "$1" = --results ] && results=$2; shift; done
       mkdir -p "$results" && touch "$results/.fk-journal.jsonl"; exit "${FK_STUB_RUN:-0}" ;;
  collect) while [ $# -gt 0 ]; do [ "$1" = -o ] && echo h5 > "$2"; shift; done ;;
  report) while [ $# -gt 0 ]; do [ "$1" = --html ] && echo "<html>" > "$2"; shift; done; echo "report table" ;;
  compare) echo "compare table"; exit "${FK_STUB_COMPARE:-0}" ;;
esac
exit 0
EOF
chmod +x "$work/fk"
export FK=$work/fk FK_STUB_LOG=$work/calls.log
nightly=$src/slurm/nightly.sh
dir=$work/nights

# Night 1: nothing to compare with.
out=$("$nightly" --dir "$dir" --date 2026-11-01 2>&1); rc=$?
check "first night exits 0 (got $rc): $out" [ "$rc" -eq 0 ]
check "run uses the nightly campaign and the slurm executor" \
  grep -qx "run $src/specs/campaigns/nightly.yaml --executor slurm --results $dir/2026-11-01" "$FK_STUB_LOG"
check "collect writes DIR/<date>/campaign.h5" grep -qx "collect --results $dir/2026-11-01 -o $dir/2026-11-01/campaign.h5" "$FK_STUB_LOG"
check "report writes the HTML into the night's folder" grep -qx "report $dir/2026-11-01/campaign.h5 --html $dir/2026-11-01/report.html" "$FK_STUB_LOG"
check "no compare on the first night" bash -c "! grep -q '^compare' '$FK_STUB_LOG'"
check "report kept" [ -f "$dir/2026-11-01/report.html" ]
check "latest -> 2026-11-01" [ "$(readlink "$dir/latest")" = 2026-11-01 ]

# Night 2: compared with night 1, no regression.
: > "$FK_STUB_LOG"
out=$("$nightly" --dir "$dir" --date 2026-11-02 --threshold 0.05 2>&1); rc=$?
check "second night exits 0 (got $rc): $out" [ "$rc" -eq 0 ]
check "compare previous with tonight, threshold passed on" \
  grep -qx "compare $dir/2026-11-01/campaign.h5 $dir/2026-11-02/campaign.h5 --threshold 0.05" "$FK_STUB_LOG"
check "latest -> 2026-11-02" [ "$(readlink "$dir/latest")" = 2026-11-02 ]
check "compare output kept" grep -q "compare table" "$dir/2026-11-02/compare.txt"

# Night 3: a regression fails the script; the report is still kept and linked.
: > "$FK_STUB_LOG"
out=$(FK_STUB_COMPARE=1 "$nightly" --dir "$dir" --date 2026-11-03 2>&1); rc=$?
check "a regression exits non-zero (got $rc): $out" [ "$rc" -eq 1 ]
check "the regression is announced" grep -q "REGRESSION against 2026-11-02" <<<"$out"
check "report of the regressed night kept" [ -f "$dir/2026-11-03/report.html" ]
check "latest -> 2026-11-03" [ "$(readlink "$dir/latest")" = 2026-11-03 ]
check "compared with the newest earlier night" grep -q "^compare $dir/2026-11-02/campaign.h5" "$FK_STUB_LOG"

# Rerun of night 3 (after a crash): fk run resumes.
: > "$FK_STUB_LOG"
FK_STUB_COMPARE=0 "$nightly" --dir "$dir" --date 2026-11-03 > /dev/null 2>&1
check "a rerun of the same night resumes" grep -qx "run $src/specs/campaigns/nightly.yaml --executor slurm --results $dir/2026-11-03 --resume" "$FK_STUB_LOG"

# Night 4: failed jobs (fk run exits 1) still give a report, and status 1.
out=$(FK_STUB_RUN=1 "$nightly" --dir "$dir" --date 2026-11-04 2>&1); rc=$?
check "failed jobs alone exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "failed jobs still collected" [ -f "$dir/2026-11-04/campaign.h5" ]

# fk run breaking (status 2): no report, its status.
out=$(FK_STUB_RUN=2 "$nightly" --dir "$dir" --date 2026-11-05 2>&1); rc=$?
check "a broken run exits with its status (got $rc)" [ "$rc" -eq 2 ]
check "no report after a broken run" [ ! -f "$dir/2026-11-05/report.html" ]
check "latest unchanged after a broken run" [ "$(readlink "$dir/latest")" = 2026-11-04 ]

# --keep 2 removes older nights.
FK_STUB_RUN=0 "$nightly" --dir "$dir" --date 2026-11-06 --keep 2 > /dev/null 2>&1
check "--keep 2 keeps the last two nights" [ "$(ls -1d "$dir"/2026-* | wc -l)" -eq 2 ]
check "--keep keeps tonight" [ -d "$dir/2026-11-06" ]

# Bad arguments.
"$nightly" --dir "$dir" --date yesterday > /dev/null 2>&1; rc=$?
check "a bad date exits 2 (got $rc)" [ "$rc" -eq 2 ]

[ "$failures" -eq 0 ] && echo "nightly.sh: all checks passed"
exit "$failures"
