#!/usr/bin/env bash
# fk forward of every test architecture in tests/runner/specs/ (random weights from one
# seed, fp32, CPU) in layouts of 2 and 4 ranks, each against its tp1 run: the features
# whose split needs a collective or a replicated weight (a full-width q/k norm
# all-gathered across TP, a replicated shared-expert gate on a TP partial sum, scaled
# branches on the residual stream, a bias-free LayerNorm) must give the one-rank model's
# logits and hidden states (relative L2 <= 1e-5).
# Usage: forward_layouts.sh FK PARITY_CHECK SRC WORK
set -euo pipefail
fk=$1 check=$2 src=$3 work=$4
inputs=$src/tests/fixtures/hf/llama/inputs.safetensors  # int64 [2, 12], ids < 131
rm -rf "$work" && mkdir -p "$work"
status=0
for spec in "$src"/tests/runner/specs/*.yaml; do
  name=$(basename "$spec" .yaml)
  "$fk" forward "$spec" --inputs "$inputs" --seed 11 --timeout 300 -o "$work/$name.tp1.safetensors"
  for layout in tp2 tp4 pp2 tp2pp2; do
    out=$work/$name.$layout.safetensors
    "$fk" forward "$spec" --inputs "$inputs" --seed 11 --timeout 300 --layout "$layout" -o "$out"
    if ! "$check" "$out" "$work/$name.tp1.safetensors" 1e-5 > "$work/$name.$layout.txt"; then
      echo "FAIL: $name $layout differs from tp1:" >&2
      cat "$work/$name.$layout.txt" >&2
      status=1
    fi
  done
done
exit $status
