"""Prints, for every job file of a results folder, where its stages ran and the kernel
stage's per-instance figures (impl, median, p10/p90, noise, throttled samples), read with
h5py as a user would. Usage: python3 bench/gpu/job_files.py RESULTS_DIR"""
import glob
import os
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
