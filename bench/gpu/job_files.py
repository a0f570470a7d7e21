"""Prints, for every job file of a results folder, where its stages ran, the model
stage's step times (median over iterations per run and step kind), its last-layer error
and token agreement, and the kernel stage's per-instance figures (impl, median, p10/p90,
noise, throttled samples), read with h5py as a user would.
Usage: python3 bench/gpu/job_files.py RESULTS_DIR"""
import glob
import os
import statistics
import sys

import h5py

for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.h5"))):
    if path.endswith("campaign.h5"):
        continue
    with h5py.File(path, "r") as f:
        a = f.attrs
        print(f"{os.path.basename(path)}: backend={a['backend']} status={a['status']}")
        print(f"  device: {a['device']}")
        print(f"  stage_backends: {a['stage_backends']}")
        for key in ("device_state_start", "device_state_end"):
            print(f"  {key}: {list(a[key]) if key in a else 'absent'}")
        if "model_stage/steps" in f:
            steps = [{k: (v.decode() if isinstance(v, bytes) else v) for k, v in zip(f["model_stage/steps"].dtype.names, row)}
                     for row in f["model_stage/steps"][()]]
            for run in ("fp32", "baseline", "selected"):
                mine = [r for r in steps if r["run"] == run]
                if not mine:
                    continue
                prefill = [r["total_s"] for r in mine if r["step"] == "prefill"]
                decode = [r["total_s"] for r in mine if r["step"].startswith("decode")]
                parts = [f"{len(mine)} step rows"]
                if prefill:
                    parts.append(f"prefill median {1e3 * statistics.median(prefill):.2f} ms")
                if decode:
                    parts.append(f"decode median {1e3 * statistics.median(decode):.3f} ms (over {len(decode)})")
                print(f"  model {run:<8}: " + ", ".join(parts))
                # Per iteration (the first one traces every layer): the step's wall time
                # against the sum of its timed device calls; the rest is host time.
                for it in sorted({r["iteration"] for r in mine}):
                    for kind in ("prefill", "decode"):
                        rows = [r for r in mine if r["iteration"] == it and r["step"].startswith(kind)]
                        if not rows:
                            continue
                        total = statistics.median(r["total_s"] for r in rows)
                        compute = statistics.median(r["compute_s"] for r in rows)
                        comm = statistics.median(r["comm_s"] for r in rows)
                        graphs = sum(1 for r in rows if r.get("graph", False))
                        print(f"    iteration {it} {kind:<7}{' graph' if graphs else ' eager'}: wall {1e3 * total:9.3f} ms, device "
                              f"{1e3 * compute:9.3f} ms compute + {1e3 * comm:.3f} ms comm, host "
                              f"{1e3 * (total - compute - comm):9.3f} ms (medians over {len(rows)})")
        if "model_stage/memory" in f:
            # Each run's peak device memory (the allocator's in use and reserved highs)
            # against the planner's per-rank estimate of the fullest run.
            estimate = int(f["model_stage"].attrs.get("memory_estimate_bytes", 0))
            ref = f["model_stage"].attrs.get("reference_weights", "absent")
            print(f"  reference weights: {ref.decode() if isinstance(ref, bytes) else ref}")
            gib = 1024 ** 3
            for row in f["model_stage/memory"][()]:
                r = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in zip(row.dtype.names, row)}
                ratio = f", {r['peak_in_use_bytes'] / estimate:.3f} of the estimate {estimate / gib:.2f} GiB" if estimate else ""
                print(f"  memory {r['run']} rank {r['rank']} {r['device']}: peak in use {r['peak_in_use_bytes'] / gib:.2f} GiB, "
                      f"reserved {r['peak_reserved_bytes'] / gib:.2f} GiB{ratio}")
        if "model_stage/layers" in f:
            t = f["model_stage/layers"][()]
            rows = [{k: (v.decode() if isinstance(v, bytes) else v) for k, v in zip(t.dtype.names, row)} for row in t]
            if rows:
                last = max(r["layer"] for r in rows)
                for r in rows:
                    if r["layer"] == last and r["step"] in ("prefill", "decode.0"):
                        print(f"  layer {last} {r['run']} {r['step']}: rel_err_vs_fp32 {r['rel_err_vs_fp32']:.3e}")
        if "model_stage/logits" in f:
            t = f["model_stage/logits"][()]
            for row in t:
                r = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in zip(t.dtype.names, row)}
                if r["step"] in ("prefill", "decode.0"):
                    print(f"  logits {r['run']} {r['step']}: top1_vs_fp32 {r['top1_vs_fp32']:.3f} "
                          f"kl_vs_fp32 {r['kl_vs_fp32']:.2e}")
        if "kernel_stage/instances" in f:
            t = f["kernel_stage/instances"][()]
            names = t.dtype.names
            for row in t:
                r = dict(zip(names, row))
                dec = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in r.items()}
                print(f"    {dec['op']:<20} {dec['role']:<22} {dec['impl']:<5} {dec['dtype']:<5} "
                      f"median {1e6 * dec['median_s']:9.2f} us  p10 {1e6 * dec['p10_s']:9.2f}  "
                      f"p90 {1e6 * dec['p90_s']:9.2f}  noise {dec['noise']:.3f}  throttled {dec['throttled']}  "
                      f"passed {dec['passed']}  rel_l2 {dec['rel_l2']:.2e}")
