#!/usr/bin/env bash
# Builds the libFuzzer targets for every reader of outside input (spec loader,
# safetensors header, HF config.json, job files, job results files) with clang (ASan +
# UBSan) into ./build-fuzz and runs each for ${1:-60} seconds (the spec loader) or half
# that (the others), over corpora seeded from the repository's own files (the results
# files: small job files written by fk_fuzz_job_h5_seeds, and damaged copies).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
short=$(( seconds / 2 > 0 ? seconds / 2 : 1 ))
cxx=${FK_FUZZ_CXX:-clang++-16}
cc=${FK_FUZZ_CC:-clang-16}
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_COMPILER="$cc" -DFK_FUZZ=ON -DFK_CUDA=OFF -DFK_BUILD_BENCH=OFF -DFK_WERROR=OFF \
    $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake --build build-fuzz -j "$(nproc)" --target fk_fuzz_spec fk_fuzz_safetensors fk_fuzz_hf_config fk_fuzz_job_file \
  fk_fuzz_job_h5 fk_fuzz_job_h5_seeds
root=$PWD
seed() {  # seed NAME FILES...: a fresh corpus folder holding the given files
  local dir=build-fuzz/corpus-$1
  shift
  mkdir -p "$dir"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | tr / _)"; done
  echo "$dir"
}
spec_corpus=$(seed spec specs/architectures/*.yaml specs/workloads/*.yaml specs/campaigns/*.yaml)
st_corpus=$(seed safetensors $(find tests/fixtures -name '*.safetensors' -size -256k | head -n 20))
hf_corpus=$(seed hf_config $(find tests/fixtures -name 'config.json' | head -n 40))
# Job files as fk plan --emit writes them (the smoke campaign's).
jobs_corpus=build-fuzz/corpus-job_file
mkdir -p "$jobs_corpus"
if [ -x build/orchestrator/fk ]; then
  build/orchestrator/fk plan specs/campaigns/smoke.yaml --emit "$jobs_corpus/smoke.json" >/dev/null 2>&1 || true
fi
# Job results files (HDF5): synthetic job files as fk-runner writes them, and damaged copies.
h5_corpus=build-fuzz/corpus-job_h5
build-fuzz/tests/fuzz/fk_fuzz_job_h5_seeds "$h5_corpus"
# Sanitizer reports name functions only with a symbolizer (fk_fuzz_job_h5 needs them
# to tell a crash inside libhdf5 from one of ours).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  for s in llvm-symbolizer-16 llvm-symbolizer; do
    if command -v "$s" >/dev/null; then export ASAN_SYMBOLIZER_PATH=$(command -v "$s"); break; fi
  done
  if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
    echo "fuzz: no llvm-symbolizer on PATH (scripts/install-deps.sh installs it: package llvm)" >&2
    exit 2
  fi
fi
# Each target's whole output goes to build-fuzz/run-TARGET/fuzz.log; a clean run prints
# its final stats, a failed one the report that says why (the target's own lines, the
# sanitizer's report with its stacks), so that a CI log names the crash.
run() {  # run TARGET CORPUS SECONDS MAX_LEN [TIMEOUT_S]
  echo "fuzz: $1 for $3 s"
  local dir="build-fuzz/run-$1" rc=0
  mkdir -p "$dir"
  (cd "$dir" && "$root/build-fuzz/tests/fuzz/fk_fuzz_$1" -max_total_time="$3" -timeout="${5:-10}" \
    -rss_limit_mb=2048 -max_len="$4" -print_final_stats=1 "$root/$2" >fuzz.log 2>&1) || rc=$?
  if [ "$rc" -eq 0 ]; then
    tail -n 8 "$dir/fuzz.log"
    return 0
  fi
  echo "fuzz: $1 failed (exit $rc); its report (whole log: $dir/fuzz.log):"
  grep -v -E '^(#[0-9]+\s+(READ|NEW|REDUCE|pulse|INITED|DONE|RELOAD)|\s*"|###### )' "$dir/fuzz.log" | tail -n 150 || true
  for f in "$dir"/crash-* "$dir"/timeout-* "$dir"/oom-*; do
    [ -f "$f" ] || continue
    echo "fuzz: input kept as $f ($(stat -c %s "$f") bytes)"
    [ "$(stat -c %s "$f")" -le 3072 ] && base64 -w 0 "$f" && echo
  done
  return "$rc"
}
# Run from scratch folders: campaign inputs resolve references relative to them.
run spec "$spec_corpus" "$seconds" 4096
run safetensors "$st_corpus" "$short" 65536
run hf_config "$hf_corpus" "$short" 8192
run job_file "$jobs_corpus" "$short" 65536
# Its own limit for a hung check is 10 s (a child per input); libFuzzer's is above it.
run job_h5 "$h5_corpus" "$short" 262144 20
