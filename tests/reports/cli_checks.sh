#!/usr/bin/env bash
# Checks of fk collect / report / compare on the campaigns run_campaigns.sh wrote.
# Usage: cli_checks.sh CASE FK WORK. Each case states what it expects; a mismatch
# prints the command's output and fails.
set -uo pipefail
case_name=$1 fk=$2 work=$3
out="$work/cli_$case_name.txt"

# expect STATUS COMMAND...: runs COMMAND (output to $out) and checks its exit status.
expect() {
  local want=$1
  shift
  "$@" > "$out" 2>&1
  local got=$?
  if [ "$got" -ne "$want" ]; then
    cat "$out"
    echo "FAIL: '$*' exited $got, expected $want" >&2
    exit 1
  fi
}
# has PATTERN / lacks PATTERN: the last output matches (or not) the extended regex.
has() { grep -Eq -- "$1" "$out" || { cat "$out"; echo "FAIL: output lacks /$1/" >&2; exit 1; }; }
lacks() { ! grep -Eq -- "$1" "$out" || { cat "$out"; echo "FAIL: output has /$1/" >&2; exit 1; }; }

# same_runs OLD NEW: fk compare of two identical runs (at --threshold 0.3, kernels of
# 50 us and more) finds no campaign-wide shift and at most one single item (see "same").
same_runs() {
  "$fk" compare "$1" "$2" --min-time 5e-5 --threshold 0.3 > "$out" 2>&1
  local got=$?
  if [ "$got" -ne 0 ] && [ "$got" -ne 1 ]; then
    cat "$out"
    echo "FAIL: 'fk compare $1 $2' exited $got" >&2
    exit 1
  fi
  lacks "^ +speed +\(campaign\)"
  lacks "^ +(precision|verdict|top-1)"
  has "fk compare: [01] regression\(s\), [01] improvement\(s\)"
  local findings
  findings=$(sed -n 's/^fk compare: \([0-9]*\) regression(s), \([0-9]*\) improvement(s)$/\1 + \2/p' "$out")
  if [ -z "$findings" ] || [ $((findings)) -gt 1 ]; then
    cat "$out"
    echo "FAIL: identical runs differ in more than one item" >&2
    exit 1
  fi
}

A=$work/a/campaign.h5 B=$work/b/campaign.h5
case $case_name in
  collect)  # the folder holds a campaign.h5 already: skipped, not merged; an existing output is replaced
    rm -f "$work/a-again.h5"
    expect 0 "$fk" collect --results "$work/a" -o "$work/a-again.h5"
    has "fk collect: 4 job\(s\) \(4 completed, 0 failed\), [0-9]+ kernel rows"
    has "skipped 1 temporary or campaign file"
    expect 0 "$fk" collect --results "$work/a" -o "$work/a-again.h5"
    has "-> $work/a-again.h5"
    [ "$(ls "$work" | grep -c 'a-again.h5')" -eq 1 ] || { ls "$work"; echo "FAIL: temporary left" >&2; exit 1; }
    ;;
  same)  # two runs of one campaign: nothing beyond noise. Kernels under 50 us are left
    # out: on a shared 2-core machine a process's memory layout (ASLR) alone moves a
    # 6 us kernel by 25% between two identical runs, reproducibly within each run, and a
    # fresh-clone CI run saw a 24 us one move by 15% (p10 too). A dozen kernels and the
    # model timings stay compared. The threshold is 30%, not 10%: whole runs of this
    # campaign on that machine moved by up to +17% against an identical one (3 of 4 jobs
    # over 5%) even taking turns job by job (docs/reports.md). The runs are made without
    # address randomisation (run_campaigns.sh), yet a later CI run still saw one 67 us
    # attention kernel +69% in every sample of one process against the other, on a
    # quiet machine (pack noise 4%): a real difference between two processes, which
    # fk compare rightly names. So one single item may differ; a campaign-wide shift or
    # a second item may not.
    same_runs "$A" "$B"
    has "kernel timings: [1-9][0-9]* items"
    same_runs "$B" "$A"
    ;;
  slowdown)  # every timed region 3 times as long, at the default threshold of 10% (a run-wide
    # drift of up to 17% between identical runs leaves a real 30% slowdown at +13%)
    expect 1 "$fk" compare "$A" "$work/slow/campaign.h5"
    has "^REGRESSIONS"
    has "speed +\(campaign\) +all kernel timings .* \+[1-9][0-9]+%"
    lacks "^ +precision"
    expect 1 "$fk" compare "$B" "$work/slow/campaign.h5"
    expect 0 "$fk" compare "$work/slow/campaign.h5" "$A"  # the other way it is an improvement
    ;;
  precision)  # rms_norm 1% noisier (rel L2 x3.7), silu_and_mul out of tolerance
    expect 1 "$fk" compare "$A" "$work/precision/campaign.h5" --verbose
    has "precision +llama-3.1-8b/small/tp1pp1dp1/baseline +kernel rms_norm .*rel L2 vs fp64"
    has "precision +mixtral-8x7b/small/tp2pp1dp1/baseline +kernel rms_norm"
    has "verdict +llama-3.1-8b/small/tp1pp1dp1/baseline +kernel silu_and_mul .*PASSED -> OUT_OF_TOLERANCE"
    lacks "precision .* kernel linear"
    ;;
  folders)  # results folders work as well as campaign files, and mixed
    expect 1 "$fk" compare "$work/a" "$work/slow"
    has "OLD results folder"
    same_runs "$work/a" "$B"  # as in "same"
    ;;
  bad_input)
    expect 2 "$fk" compare "$A" "$work/nope.h5"
    has "no such campaign file or results folder"
    expect 2 "$fk" compare "$A" "$work/a/$(ls "$work/a" | grep -v campaign | head -n 1)"
    has "single job file"
    mkdir -p "$work/empty"
    expect 2 "$fk" compare "$A" "$work/empty"
    has "no job in common"
    expect 2 "$fk" collect --results "$work/nope"
    expect 2 "$fk" report "$work/nope.h5"
    ;;
  report)
    expect 0 "$fk" report "$A" --html "$work/report.html"
    has "FastKernels campaign report: reports"
    has "score: n/a \(baseline-only campaign"
    has "llama-3.1-8b +rms_norm +2 +2 +2/2"
    has "mixtral-8x7b +fused_moe"
    has "Geometric means per family"
    has "mistral +1 +2"
    # Both architectures are decoders: 2 archs, 4 jobs in the first category, none in the others.
    has "Geometric means per FastKernels category"
    has "Dense & MoE LLMs +2 +4 "
    has "Linear attention & SSM +0 +0 +0/0 +-"
    has "World models +0 +0 "
    has "HTML written to"
    [ -s "$work/report.html" ] || { echo "FAIL: no HTML" >&2; exit 1; }
    expect 0 "$fk" report "$work/precision"  # a folder; out-of-tolerance kernels counted
    has "llama-3.1-8b +silu_and_mul +2 +2 +0/2"
    ;;
  corrupt)  # a garbage file and a truncated job file are named and skipped, exit 1
    rm -rf "$work/corrupt" && cp -r "$work/a" "$work/corrupt" && rm -f "$work/corrupt/campaign.h5"
    first=$(ls "$work/corrupt" | head -n 1)
    head -c 5000 "$work/corrupt/$first" > "$work/corrupt/truncated.h5"
    echo "not hdf5" > "$work/corrupt/garbage.h5"
    cp "$work/corrupt/$first" "$work/corrupt/$first.tmp.999.0"
    expect 1 "$fk" collect --results "$work/corrupt"
    has "left out .*garbage.h5"
    has "left out .*truncated.h5"
    has "4 job\(s\)"
    has "2 file\(s\) left out"
    expect 0 "$fk" compare "$A" "$work/corrupt/campaign.h5"
    ;;
  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "ok: $case_name"
