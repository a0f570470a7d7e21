#!/usr/bin/env bash
# The nightly regression: runs the nightly campaign through the Slurm executor into
# DIR/<date>/, merges the job files into DIR/<date>/campaign.h5, writes the HTML
# report, compares with the most recent earlier night and points DIR/latest at
# tonight. Earlier nights are kept (delete old ones yourself or with --keep N).
#
#   slurm/nightly.sh [--dir DIR] [--campaign FILE] [--executor slurm|local]
#                    [--threshold X] [--date YYYY-MM-DD] [--keep N]
#
# Exit status: 0 no regression and every job done; the status of `fk compare` when it
# finds a regression (non-zero); 1 when some job failed but nothing regressed; the
# status of the step that broke otherwise. Run it from cron on a login node (fk run
# submits one Slurm job per attempt and follows them) — docs/slurm.md.
#
# Environment: FK (the fk executable; default build/orchestrator/fk, else fk on PATH),
# FK_NIGHTLY_DIR (default DIR: <repo>/nightly).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${FK_NIGHTLY_DIR:-$root/nightly}
campaign=$root/specs/campaigns/nightly.yaml
executor=slurm
threshold=""
date=$(date +%F)
keep=0

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --campaign) campaign=$2; shift 2 ;;
    --executor) executor=$2; shift 2 ;;
    --threshold) threshold=$2; shift 2 ;;
    --date) date=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "nightly: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ "$date" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || { echo "nightly: --date wants YYYY-MM-DD, not '$date'" >&2; exit 2; }

fk=${FK:-}
if [ -z "$fk" ]; then
  if [ -x "$root/build/orchestrator/fk" ]; then fk=$root/build/orchestrator/fk; else fk=$(command -v fk || true); fi
fi
[ -n "$fk" ] && [ -x "$fk" ] || { echo "nightly: no fk executable (build it, or set FK)" >&2; exit 2; }

say() { echo "nightly $date: $*"; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tonight=$dir/$date
# The previous night: the newest earlier dated folder that has a campaign file.
previous=""
for d in $(ls -1d "$dir"/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] 2> /dev/null | sort); do
  [ "$(basename "$d")" \< "$date" ] && [ -f "$d/campaign.h5" ] && previous=$d
done

# 1. Run (resuming when tonight's folder already has a journal: a rerun after a crash).
mkdir -p "$tonight"
resume=()
[ -e "$tonight/.fk-journal.jsonl" ] && resume=(--resume)
say "fk run $campaign --executor $executor --results $tonight ${resume[*]}"
run_status=0
"$fk" run "$campaign" --executor "$executor" --results "$tonight" "${resume[@]}" || run_status=$?
if [ "$run_status" -ne 0 ] && [ "$run_status" -ne 1 ]; then
  say "fk run stopped with status $run_status: no report tonight"
  exit "$run_status"
fi
[ "$run_status" -eq 1 ] && say "some jobs failed (see above); collecting what landed"

# 2. Collect and report.
"$fk" collect --results "$tonight" -o "$tonight/campaign.h5"
"$fk" report "$tonight/campaign.h5" --html "$tonight/report.html" | tee "$tonight/report.txt"
ln -sfn "$date" "$dir/latest"
say "report: $tonight/report.html (also $dir/latest/report.html)"

# 3. Compare with the previous night.
compare_status=0
if [ -n "$previous" ]; then
  say "fk compare $previous/campaign.h5 $tonight/campaign.h5"
  "$fk" compare "$previous/campaign.h5" "$tonight/campaign.h5" ${threshold:+--threshold "$threshold"} \
    > "$tonight/compare.txt" 2>&1 || compare_status=$?
  cat "$tonight/compare.txt"
else
  echo "no earlier night in $dir: nothing to compare" | tee "$tonight/compare.txt"
fi

# 4. Keep the last N nights (0 = all).
if [ "$keep" -gt 0 ]; then
  ls -1d "$dir"/[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] | sort | head -n "-$keep" | while read -r old; do
    [ "$old" != "$tonight" ] && rm -rf -- "$old" && say "removed $old"
  done
fi

if [ "$compare_status" -ne 0 ]; then
  say "REGRESSION against $(basename "$previous") (fk compare exited $compare_status)"
  exit "$compare_status"
fi
exit "$run_status"
