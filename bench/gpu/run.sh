#!/usr/bin/env bash
# One call on the GPU machine (the device tool): configure and build with that
# machine's own packages (newer yaml-cpp, Boost, HDF5, GTest) plus .deps/ from
# scripts/pack-gpu-deps.sh, run the gpu-labelled tests and the CPU suite, and record
# versions. Logs go to $OUT. Usage there: bash bench/gpu/run.sh
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
out=${OUT:-/tmp/fk-gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
{
  nvidia-smi -L; nvcc --version | tail -2; cmake --version | head -1; gcc --version | head -1
  which mpicxx mpirun; mpirun --version 2>&1 | head -1
  for p in libyaml-cpp-dev libboost-dev libhdf5-dev libgtest-dev libnccl-dev; do dpkg-query -W -f='${Package} ${Version}\n' "$p" 2>/dev/null; done
} > "$out/versions.txt" 2>&1
cat "$out/versions.txt"
# cuDNN there is the pip wheel of the python environment (nvidia-cudnn-cu13), not in
# the CUDA toolkit: its root (include/, lib/) is found through python.
cudnn_root=${FK_CUDNN_ROOT:-}
if [ -z "$cudnn_root" ]; then
  cudnn_root=$(python3 -c "import nvidia.cudnn as m; print(list(m.__path__)[0])" 2>/dev/null) ||
    cudnn_root=$(ls -d /opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn 2>/dev/null | head -1)
fi
echo "cudnn root: ${cudnn_root:-not found, the CUDA toolkit one if any}" | tee -a "$out/versions.txt"
# FK_GPU_FIXTURES="mamba ...": make those HF parity fixtures first, with the machine's
# transformers (tests/fixtures/hf/make_fixtures.py), into tests/fixtures/hf/ so that the
# build's parity tests include them; they come back together as $OUT/fixtures.tgz (the
# device tool brings back only a few files).
if [ -n "${FK_GPU_FIXTURES:-}" ]; then
  python3 tests/fixtures/hf/make_fixtures.py /tmp/fk-fixtures $FK_GPU_FIXTURES > "$out/fixtures.log" 2>&1
  echo "fixtures ($FK_GPU_FIXTURES): exit $?"; tail -5 "$out/fixtures.log"
  made=()
  for mt in $FK_GPU_FIXTURES; do
    [ -d "/tmp/fk-fixtures/$mt" ] || continue
    rm -rf "tests/fixtures/hf/$mt" && cp -r "/tmp/fk-fixtures/$mt" "tests/fixtures/hf/$mt"
    made+=("$mt")
  done
  [ ${#made[@]} -gt 0 ] && tar czf /tmp/fk-fixtures.tgz -C /tmp/fk-fixtures "${made[@]}"
fi
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DFK_DEPS_DIR="$PWD/.deps" -DFK_BUILD_BENCH=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  ${cudnn_root:+-DFK_CUDNN_ROOT="$cudnn_root"} > "$out/configure.log" 2>&1 ||
  { tail -40 "$out/configure.log"; exit 1; }
grep -E "FastKernels|Found (HDF5|GTest|Boost|yaml)|cuDNN" "$out/configure.log"
cmake --build build-gpu -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -E "error|FAILED" -A5 "$out/build.log" | head -60; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s"
# FK_GPU_OPS_BASE=tree.tgz (a `git archive` of an earlier commit, carried with the
# call): that tree's fk-bench-ops is built in the background while the tests run, and
# the ops step runs it on the same workloads right after ours (ops-base.txt): a
# before/after of the baselines in one call, on one device.
base_ops=
if [ -n "${FK_GPU_OPS_BASE:-}" ]; then
  rm -rf /tmp/fk-base && mkdir -p /tmp/fk-base && tar xzf "$FK_GPU_OPS_BASE" -C /tmp/fk-base
  ( cmake -S /tmp/fk-base -B /tmp/fk-base/build -G Ninja -DFK_DEPS_DIR="$PWD/.deps" -DFK_BUILD_BENCH=OFF \
      -DFK_BUILD_TESTS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON ${cudnn_root:+-DFK_CUDNN_ROOT="$cudnn_root"} &&
    cmake --build /tmp/fk-base/build --target fk-bench-ops -j "$(nproc)" ) > "$out/base-build.log" 2>&1 &
  base_build=$!
  base_ops=/tmp/fk-base/build/bench/gpu/fk-bench-ops
fi
# Tests labelled gpu2 need two GPUs (one per rank); on a 1-GPU machine they are not
# run, and this says so.
exclude=()
if [ "$(nvidia-smi -L | wc -l)" -lt 2 ]; then
  exclude=(-LE gpu2)
  echo "gpu2 tests not run: this machine has 1 GPU ($(ctest --test-dir build-gpu -N -L gpu2 | tail -1))"
fi
# FK_GPU_TEST_REGEX narrows the gpu tests (ctest -R), e.g. '^cuda\.' for the CUDA zoo.
if [ "${FK_GPU_TESTS:-1}" = 1 ]; then
  # FK_GPU_TEST_LIMIT (seconds) bounds the whole gpu suite, so that a slow suite still
  # leaves time for the steps after it inside one device call.
  timeout "${FK_GPU_TEST_LIMIT:-3000}" ctest --test-dir build-gpu -L gpu "${exclude[@]}" ${FK_GPU_TEST_REGEX:+-R "$FK_GPU_TEST_REGEX"} -j "${FK_GPU_TEST_JOBS:-1}" --output-on-failure \
    --timeout 300 > "$out/gpu-tests.log" 2>&1
  echo "gpu tests: exit $?"; grep -E "tests passed|Failed|FAILED" "$out/gpu-tests.log" | head -30
fi
# The example CUDA candidates judged on the GPU at the published sizes of the default
# architectures (llama-3.1-8b, qwen3-8b, gemma-2-9b: gates at every shape) and at the
# tiny presets (the model stage too).
if [ "${FK_GPU_CHECK:-1}" = 1 ]; then
  t1=$(date +%s)
  # FK_GPU_CHECK_CANDIDATES narrows the candidate folders (default: every example's).
  build-gpu/orchestrator/fk check ${FK_GPU_CHECK_CANDIDATES:-candidates/*/cuda} --backend cuda --results build-gpu/check-cuda \
    --iterations "${FK_GPU_CHECK_ITERATIONS:-20}" > "$out/check-cuda.log" 2>&1
  echo "fk check candidates/*/cuda: exit $? in $(( $(date +%s) - t1 )) s"
  grep -v "^  " "$out/check-cuda.log" | tail -60
  python3 bench/gpu/check_timing.py build-gpu/check-cuda > "$out/check-timing.txt" 2>&1
  echo "check timing: exit $?"; tail -60 "$out/check-timing.txt"
fi
# The smoke campaign with backend: cuda (tp1: one rank, one GPU): its kernel stage runs
# the CUDA baselines; the job files record the device and where each stage ran.
if [ "${FK_GPU_SMOKE:-1}" = 1 ]; then
  rm -rf build-gpu/smoke-cuda
  t1=$(date +%s)
  build-gpu/orchestrator/fk run specs/campaigns/smoke-cuda.yaml --results build-gpu/smoke-cuda > "$out/smoke-cuda.log" 2>&1
  echo "smoke-cuda: exit $? in $(( $(date +%s) - t1 )) s"; tail -15 "$out/smoke-cuda.log"
  build-gpu/orchestrator/fk collect --results build-gpu/smoke-cuda >> "$out/smoke-cuda.log" 2>&1 &&
    build-gpu/orchestrator/fk report build-gpu/smoke-cuda/campaign.h5 > "$out/smoke-cuda-report.txt" 2>&1
  echo "smoke-cuda report: exit $?"; head -40 "$out/smoke-cuda-report.txt"
  python3 bench/gpu/job_files.py build-gpu/smoke-cuda > "$out/smoke-cuda-jobs.txt" 2>&1; cat "$out/smoke-cuda-jobs.txt"
fi
# FK_GPU_IMAGES=1: the image models at full size (specs/campaigns/full-cuda-images.yaml),
# then the same models in HF transformers, eager and compiled (images_torch.py).
if [ "${FK_GPU_IMAGES:-0}" = 1 ]; then
  rm -rf build-gpu/full-cuda-images
  t1=$(date +%s)
  build-gpu/orchestrator/fk run specs/campaigns/full-cuda-images.yaml --results build-gpu/full-cuda-images \
    > "$out/images.log" 2>&1
  echo "full-cuda-images: exit $? in $(( $(date +%s) - t1 )) s"; tail -6 "$out/images.log"
  build-gpu/orchestrator/fk collect --results build-gpu/full-cuda-images >> "$out/images.log" 2>&1 &&
    build-gpu/orchestrator/fk report build-gpu/full-cuda-images/campaign.h5 > "$out/images-report.txt" 2>&1
  echo "full-cuda-images report: exit $?"; grep -A5 "^Model stage" "$out/images-report.txt"
  python3 bench/gpu/job_files.py build-gpu/full-cuda-images > "$out/images-jobs.txt" 2>&1
  grep -E "^[0-9a-f]+.*h5|model baseline" "$out/images-jobs.txt"
  timeout "${FK_GPU_IMAGES_TORCH_LIMIT:-300}" python3 bench/gpu/images_torch.py 8 > "$out/images-torch.txt" 2>&1
  echo "images_torch: exit $?"; cat "$out/images-torch.txt"
fi
# Every baseline op at llama-3.1-8b's published shapes (prefill of 8 x 512 = 4096 tokens,
# and a decode step of 32 sequences at context 2048), timed the kernel stage's way against
# the copy bandwidth of the same run (fk-bench-ops), then torch eager and torch.compile
# on the same rows (ops_torch.py). FK_GPU_OPS_ARCHS / FK_GPU_OPS_WORKLOADS widen it.
# FK_GPU_OPS_SPAN=1 adds each call's device span (fk-bench-ops --device-span, CUPTI).
if [ "${FK_GPU_OPS:-0}" = 1 ]; then
  : > "$out/ops.txt"
  span=()
  [ "${FK_GPU_OPS_SPAN:-0}" = 1 ] && span=(--device-span)
  # FK_GPU_OPS_ONLY="fused_moe ...": only those ops' rows.
  only=()
  for op in ${FK_GPU_OPS_ONLY:-}; do only+=(--op "$op"); done
  for arch in ${FK_GPU_OPS_ARCHS:-llama-3.1-8b}; do
    for wl in ${FK_GPU_OPS_WORKLOADS:-prefill-512 decode-b32}; do
      build-gpu/bench/gpu/fk-bench-ops --arch "specs/architectures/$arch.yaml" --workload "specs/workloads/$wl.yaml" \
        "${span[@]}" "${only[@]}" --json "$out/ops-$arch-$wl.jsonl" >> "$out/ops.txt" 2>&1
      echo "fk-bench-ops $arch $wl: exit $?"
      # FK_GPU_OPS_MOE_VARIANTS="FK_MOE_CUBLASLT=0 FK_MOE_TILE_ROWS=512 ...": the fused_moe
      # rows again under each setting (the own grouped GEMM kernels, another tile height),
      # side by side with the default path.
      for setting in ${FK_GPU_OPS_MOE_VARIANTS:-}; do
        echo "== $setting, $arch $wl: fused_moe rows" >> "$out/ops.txt"
        env "$setting" build-gpu/bench/gpu/fk-bench-ops --arch "specs/architectures/$arch.yaml" \
          --workload "specs/workloads/$wl.yaml" "${span[@]}" --op fused_moe >> "$out/ops.txt" 2>&1
      done
      # FK_GPU_OPS_VARIANTS="FK_LINEAR_GEMV=0 ...": the rows (FK_GPU_OPS_ONLY's, or all)
      # again under each setting, in the same run.
      for setting in ${FK_GPU_OPS_VARIANTS:-}; do
        echo "== $setting, $arch $wl: ${FK_GPU_OPS_ONLY:-all} rows" >> "$out/ops.txt"
        env "$setting" build-gpu/bench/gpu/fk-bench-ops --arch "specs/architectures/$arch.yaml" \
          --workload "specs/workloads/$wl.yaml" "${span[@]}" "${only[@]}" >> "$out/ops.txt" 2>&1
      done
    done
  done
  # The attention rows again with cuDNN off (FK_CUDNN_PATH=off): the built-in flash
  # kernel that cuDNN replaced for prefill, timed in the same call.
  # And with cuDNN's graph without the row statistics first (FK_CUDNN_ATTENTION_FORM=plain).
  if [ -n "$base_ops" ]; then
    wait "$base_build"; echo "base fk-bench-ops build: exit $?"; tail -3 "$out/base-build.log"
    for arch in ${FK_GPU_OPS_ARCHS:-llama-3.1-8b}; do
      for wl in ${FK_GPU_OPS_WORKLOADS:-prefill-512 decode-b32}; do
        "$base_ops" --arch "specs/architectures/$arch.yaml" --workload "specs/workloads/$wl.yaml" "${span[@]}" \
          >> "$out/ops-base.txt" 2>&1
        echo "base fk-bench-ops $arch $wl: exit $?"
      done
    done
    cat "$out/ops-base.txt"
  fi
  if [ "${FK_GPU_OPS_FLASH:-1}" = 1 ]; then
    for setting in FK_CUDNN_PATH=off FK_CUDNN_ATTENTION_FORM=plain; do
      for wl in ${FK_GPU_OPS_WORKLOADS:-prefill-512 decode-b32}; do
        echo "== $setting, $wl: attention rows" >> "$out/ops.txt"
        env "$setting" build-gpu/bench/gpu/fk-bench-ops --arch specs/architectures/llama-3.1-8b.yaml \
          --workload "specs/workloads/$wl.yaml" "${span[@]}" 2>&1 | grep -E "attention|copy|^op|engine" >> "$out/ops.txt"
      done
    done
  fi
  cat "$out/ops.txt"
  if [ "${FK_GPU_OPS_TORCH:-1}" = 1 ]; then
    python3 bench/gpu/ops_torch.py "$out"/ops-*.jsonl > "$out/ops-torch.txt" 2>&1
    echo "ops_torch: exit $?"; cat "$out/ops-torch.txt" | grep -v "^\s*$" | tail -80
  fi
fi
# Full-size models (specs/campaigns/full-cuda.yaml: llama-3.1-8b, bf16, one GPU; or the
# campaign FK_GPU_FULL_CAMPAIGN names, such as full-cuda-large.yaml): the campaign
# through fk run, device memory and use sampled every 5 s beside it.
if [ "${FK_GPU_FULL:-0}" = 1 ]; then
  campaign=${FK_GPU_FULL_CAMPAIGN:-specs/campaigns/full-cuda.yaml}
  rm -rf build-gpu/full-cuda
  build-gpu/orchestrator/fk plan "$campaign" > "$out/full-cuda-plan.txt" 2>&1
  echo "full-cuda plan: exit $?"; tail -8 "$out/full-cuda-plan.txt"
  nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu,clocks.sm --format=csv -l 5 > "$out/full-cuda-smi.csv" 2>&1 &
  smi=$!
  t1=$(date +%s)
  timeout "${FK_GPU_FULL_LIMIT:-540}" build-gpu/orchestrator/fk run "$campaign" --plain --results build-gpu/full-cuda \
    > "$out/full-cuda.log" 2>&1 &
  run=$!
  # The runner's host threads at FK_GPU_FULL_STACK_AT seconds (which threads are busy in
  # a host-bound phase; the GPU machine has no gdb for stacks).
  ( sleep "${FK_GPU_FULL_STACK_AT:-150}"; pid=$(pgrep -n fk-runner)
    [ -n "$pid" ] && top -b -H -n 1 -p "$pid" | head -20 > "$out/full-cuda-top.txt" 2>&1 ) &
  # The job logs (the runner's progress notes) copied as they grow, so that a call cut
  # off by the device's time limit still brings them back.
  mkdir -p "$out/full-cuda"
  ( while kill -0 "$run" 2>/dev/null; do cp build-gpu/full-cuda/logs/*.log "$out/full-cuda/" 2>/dev/null; sleep 10; done ) &
  wait "$run"
  echo "full-cuda: exit $? in $(( $(date +%s) - t1 )) s"; tail -15 "$out/full-cuda.log"
  kill "$smi" 2>/dev/null
  sort -t, -k2 -n "$out/full-cuda-smi.csv" | tail -1 | sed 's/^/peak memory sample: /'
  python3 bench/gpu/job_files.py build-gpu/full-cuda > "$out/full-cuda-jobs.txt" 2>&1; cat "$out/full-cuda-jobs.txt"
  cp build-gpu/full-cuda/*.h5 build-gpu/full-cuda/logs/*.log "$out/full-cuda/" 2>/dev/null
  grep -h "fk-runner:" build-gpu/full-cuda/logs/*.log | tail -40
fi
# The gpt-fast-style PyTorch decode step (bench/gpu/gpt_fast.py: static KV cache, fused
# weights, SDPA, a CUDA graph) at the batches and contexts of the full-size jobs, and its
# prefill (FK_GPU_GPTFAST_PREFILL, default one 4096-token prompt: prefill-4k's shape;
# empty: none); FK_GPU_GPTFAST_MODEL=mixtral-8x7b for Mixtral's config.
if [ "${FK_GPU_GPTFAST:-0}" = 1 ]; then
  prefill=()
  for p in ${FK_GPU_GPTFAST_PREFILL-1:4096}; do prefill+=(--prefill "$p"); done
  python3 bench/gpu/gpt_fast.py ${FK_GPU_GPTFAST_SHAPES:-1:1024 8:512 32:2048} "${prefill[@]}" \
    --model "${FK_GPU_GPTFAST_MODEL:-llama-3.1-8b}" > "$out/gpt-fast.txt" 2>&1
  echo "gpt-fast: exit $?"; tail -8 "$out/gpt-fast.txt"
fi
# The measurement driver against triton.testing.do_bench on the same kernels (the CUDA
# rms_norm baseline, the example CUDA candidate built with nvcc -O3, the cuBLASLt GEMM).
if [ "${FK_GPU_DO_BENCH:-1}" = 1 ]; then
  nvcc -O3 -arch=sm_90 -std=c++17 -shared -Xcompiler -fPIC -Ikernels candidates/rms_norm/cuda/rms_norm.cu \
    -o build-gpu/rms_norm_candidate.so > "$out/do-bench.log" 2>&1
  python3 bench/gpu/do_bench.py build-gpu/bench/gpu/libfk_bench_shim.so build-gpu/rms_norm_candidate.so \
    >> "$out/do-bench.log" 2>&1
  echo "do_bench: exit $?"; tail -12 "$out/do-bench.log"
fi
# FK_GPU_CPU_TEST_REGEX: CPU tests of that regex only (ctest -R), e.g. a new fixture's
# hf.parity tests, instead of the whole CPU suite.
if [ -n "${FK_GPU_CPU_TEST_REGEX:-}" ]; then
  ctest --test-dir build-gpu -LE gpu -R "$FK_GPU_CPU_TEST_REGEX" -j "$(nproc)" --timeout 900 --output-on-failure \
    > "$out/cpu-tests.log" 2>&1
  echo "cpu tests ($FK_GPU_CPU_TEST_REGEX): exit $?"; grep -E "tests passed|\*\*\*Failed|FAILED" "$out/cpu-tests.log" | head -20
elif [ "${FK_GPU_CPU_TESTS:-1}" = 1 ]; then
  ctest --test-dir build-gpu -LE gpu -j "$(nproc)" --timeout 900 > "$out/cpu-tests.log" 2>&1
  echo "cpu tests: exit $?"; grep -E "tests passed|\*\*\*Failed|FAILED" "$out/cpu-tests.log" | head -20
fi
# Collective bandwidth: NCCL between the GPUs and MPI on host memory, same sweep.
if [ "${FK_GPU_PROBE:-1}" = 1 ]; then
  n=$(nvidia-smi -L | wc -l)
  mpirun -np "$n" build-gpu/runner/fk-runner --collectives --backend nccl --min-bytes 1K --max-bytes 256M --iters 20 \
    > "$out/probe-nccl.txt" 2>&1; echo "nccl probe: exit $?"; cat "$out/probe-nccl.txt" | tail -30
  mpirun -np "$n" build-gpu/runner/fk-runner --collectives --backend mpi --min-bytes 1K --max-bytes 64M --iters 20 \
    > "$out/probe-mpi.txt" 2>&1; echo "mpi probe: exit $?"
fi
# The device tool brings back only a few files from $OUT: pack the logs into one
# archive (job .h5 files are left out: they can be large). FK_GPU_PACK=0 keeps them apart.
if [ "${FK_GPU_PACK:-1}" = 1 ]; then
  pack=$(mktemp /tmp/fk-gpu-logs.XXXXXX.tgz)
  find "$out" -name '*.h5' -delete
  tar czf "$pack" -C "$out" . && find "$out" -mindepth 1 -delete && mv "$pack" "$out/fk-gpu-logs.tgz" &&
    echo "logs: \$OUT/fk-gpu-logs.tgz"
fi
[ -f /tmp/fk-fixtures.tgz ] && mv /tmp/fk-fixtures.tgz "$out/fixtures.tgz"
