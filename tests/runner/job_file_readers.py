"""Reads fk-runner job files with h5py the way users do (docs/results-schema.md) and
checks the documented layout. Usage: job_file_readers.py RESULTS_DIR"""
import glob
import sys

import h5py
import numpy as np

files = sorted(glob.glob(sys.argv[1] + "/*.h5"))
assert files, "no job files in " + sys.argv[1]
problems = []
for path in files:
    with h5py.File(path, "r") as f:
        for key in ("format", "job_id", "architecture", "layout", "status", "job_json", "rank_hosts"):
            if key not in f.attrs:
                problems.append(f"{path}: missing attribute {key}")
        if f.attrs["format"] != "fastkernels-job" or f.attrs["status"] != "completed":
            problems.append(f"{path}: format/status {f.attrs['format']}/{f.attrs['status']}")
        inst = f["kernel_stage/instances"][()]
        for col in ("op", "role", "shape", "rel_l2", "matched_fraction", "passed", "median_s", "p10_s", "p90_s"):
            if col not in inst.dtype.names:
                problems.append(f"{path}: instances lacks column {col}")
        if not np.all(inst["p10_s"] <= inst["median_s"]) or not np.all(inst["median_s"] <= inst["p90_s"]):
            problems.append(f"{path}: percentiles out of order")
        for i in range(len(inst)):
            t = f[f"kernel_stage/timings/{i:04d}"][()]
            if t.ndim != 2 or t.shape[0] != inst["ranks"][i] or not np.all(np.isfinite(t)) or np.any(t <= 0):
                problems.append(f"{path}: timings/{i:04d} shape {t.shape} or values wrong")
            if abs(np.median(t) - inst["median_s"][i]) > 1e-12:
                problems.append(f"{path}: median of raw samples != median_s for {i}")
        steps = f["model_stage/steps"][()]
        if not np.all(steps["compute_s"] + steps["comm_s"] <= steps["total_s"] * 1.05 + 1e-4):
            problems.append(f"{path}: compute + comm exceed the step time")
        # Peak memory of every run on every rank, against the planner's per-rank estimate
        # of the fullest run (measured on the CPU smoke campaign: 0.88-1.02 of it).
        memory = f["model_stage/memory"][()]
        estimate = int(f["model_stage"].attrs["memory_estimate_bytes"])
        reference = f["model_stage"].attrs.get("reference_weights")
        reference = reference.decode() if isinstance(reference, bytes) else reference
        if reference not in ("resident", "streamed"):
            problems.append(f"{path}: model_stage reference_weights is {reference!r}, not resident or streamed")
        if {(m["run"].decode() if isinstance(m["run"], bytes) else m["run"], int(m["rank"])) for m in memory} != \
                {(r.decode() if isinstance(r, bytes) else r, int(k)) for r, k in zip(steps["run"], steps["rank"])}:
            problems.append(f"{path}: memory rows are not one per (run, rank) of the steps")
        if len(memory) == 0 or estimate <= 0 or not np.all(memory["peak_in_use_bytes"] > 0) or \
                not np.all(memory["peak_in_use_bytes"] <= memory["peak_reserved_bytes"]):
            problems.append(f"{path}: memory peaks missing, non-positive or in use above reserved")
        elif not 0.5 * estimate <= memory["peak_in_use_bytes"].max() <= 1.5 * estimate:
            problems.append(f"{path}: peak {memory['peak_in_use_bytes'].max()} B is far from the estimate {estimate} B")
        layers = f["model_stage/layers"][()]
        if len(layers) == 0 or not np.all(np.isfinite(layers["rel_err_vs_fp32"])):
            problems.append(f"{path}: layer trace empty or not finite")
        if "fp32_logits" in f["model_stage"] and f["model_stage/fp32_logits"].ndim != 3:
            problems.append(f"{path}: fp32_logits is not [step, sequence, vocab]")
print(f"read {len(files)} job files with h5py {h5py.__version__}")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
