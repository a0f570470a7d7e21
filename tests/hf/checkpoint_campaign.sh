#!/usr/bin/env bash
# A campaign on a user's own checkpoint (docs/checkpoints.md): import the Llama and
# Mixtral fixtures' configs into a specs folder (their `checkpoint:` points at the
# fixture weights), run a campaign of both in tp1 and tp2pp2 with `fk run`, and check
# that every job completed and recorded the checkpoint in its job file. A campaign on a
# truncated or missing checkpoint must be refused at planning, naming the tensor.
#   checkpoint_campaign.sh FK FIXTURES_DIR WORK_DIR
set -euo pipefail
fk=$1 fixtures=$2 work=$3
rm -rf "$work" && mkdir -p "$work/specs/architectures"
for mt in llama mixtral; do
  "$fk" import-hf "$fixtures/$mt/config.json" --name "$mt-ckpt" -o "$work/specs/architectures/$mt-ckpt.yaml"
  grep -q "^checkpoint:" "$work/specs/architectures/$mt-ckpt.yaml" || { echo "no checkpoint: in the imported $mt spec"; exit 1; }
done
write_campaign() {  # name architectures...
  local name=$1; shift
  cat > "$work/$name.yaml" <<EOF
kind: campaign
name: $name
description: fixtures' checkpoints through the model and kernel stages
scale: full
backend: cpu
specs_dir: specs
seed: 5
architectures: [$(IFS=,; echo "$*")]
workloads:
  - {name: p, phase: prefill, batch: 2, seq_len: 12, decode_steps: 1, dtype: bf16}
layouts: [tp1, tp2pp2]
kernel_stage: {warmup: 0, iterations: 1, rounds: 1}
model_stage: {iterations: 1}
executor: {kind: local, slots: 4, retries: 0}
EOF
}
write_campaign own llama-ckpt mixtral-ckpt
"$fk" run "$work/own.yaml" --results "$work/own" --plain
n=$(ls "$work"/own/*.h5 | wc -l)
[ "$n" -eq 4 ] || { echo "expected 4 job files, found $n"; exit 1; }
grep -q "model.safetensors" "$work/own/jobs.json" || { echo "the job file does not carry the checkpoint"; exit 1; }

# A truncated copy of the Llama checkpoint: fk run refuses the plan (exit 2) and says
# which tensor the file cuts, before launching anything.
mkdir -p "$work/broken"
cp "$fixtures/llama/model.safetensors" "$work/broken/model.safetensors"
truncate -s -100 "$work/broken/model.safetensors"
sed "s|^checkpoint:.*|checkpoint: $work/broken/model.safetensors|" "$work/specs/architectures/llama-ckpt.yaml" \
  > "$work/specs/architectures/llama-broken.yaml"
sed -i "s|^name: llama-ckpt|name: llama-broken|" "$work/specs/architectures/llama-broken.yaml"
write_campaign broken llama-broken
set +e
"$fk" run "$work/broken.yaml" --results "$work/broken-results" --plain > "$work/broken.log" 2>&1
status=$?
set -e
cat "$work/broken.log"
[ "$status" -eq 2 ] || { echo "expected fk run to exit 2 (bad input), got $status"; exit 1; }
grep -q "checkpoint: llama-broken" "$work/broken.log" || { echo "the error does not name the field and architecture"; exit 1; }
grep -q "tensor 'model.norm.weight'.*truncated" "$work/broken.log" || { echo "the error does not name the truncated tensor"; exit 1; }
[ ! -e "$work/broken-results/logs" ] || [ -z "$(ls "$work/broken-results/logs")" ] || { echo "attempts were launched"; exit 1; }
# The same for a checkpoint that is not there.
sed -i "s|^checkpoint:.*|checkpoint: $work/nowhere|" "$work/specs/architectures/llama-broken.yaml"
set +e
"$fk" plan "$work/broken.yaml" > "$work/missing.log" 2>&1
status=$?
set -e
cat "$work/missing.log"
[ "$status" -eq 1 ] && grep -q "checkpoint: llama-broken: .*no such checkpoint" "$work/missing.log" ||
  { echo "a missing checkpoint is not a plan error (fk plan exits 1 on invalid specs)"; exit 1; }
echo "checkpoint campaign: ok"
