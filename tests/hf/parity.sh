#!/usr/bin/env bash
# One HF parity test: fixture <model_type> under <layout>.
#   parity.sh FK PARITY_CHECK FIXTURES_DIR MODEL_TYPE LAYOUT WORK_DIR [DTYPE TOLERANCE [BACKEND]]
# Imports the fixture's config.json with `fk import-hf`, runs `fk forward` on its
# checkpoint and inputs in LAYOUT (BACKEND, default cpu; DTYPE, default fp32), and checks the
# logits (or last_hidden_state) and every hidden state against HF's fp32 outputs
# within relative L2 TOLERANCE (default 1e-5).
set -euo pipefail
fk=$1 check=$2 fixtures=$3 mt=$4 layout=$5 work=$6
dtype=${7:-fp32} tol=${8:-1e-5} backend=${9:-cpu}
dir=$work/$mt-$layout
[ "$dtype" = fp32 ] || dir=$dir-$dtype
[ "$backend" = cpu ] || dir=$dir-$backend
rm -rf "$dir" && mkdir -p "$dir"
"$fk" import-hf "$fixtures/$mt/config.json" -o "$dir/spec.yaml"
"$fk" forward "$dir/spec.yaml" --weights "$fixtures/$mt/model.safetensors" --inputs "$fixtures/$mt/inputs.safetensors" \
  --layout "$layout" --dtype "$dtype" --backend "$backend" -o "$dir/out.safetensors" --timeout 300
"$check" "$dir/out.safetensors" "$fixtures/$mt/expected.safetensors" "$tol"
