"""Prints, for every timed device-candidate instance in a results folder, how its time
was charged (kernels/candidate/gates.h device_time_bounded): the medians of the spans
the candidate's worker reported, of the supervisor's clock around the candidate's and
the baseline's calls, of the baseline's spans, and the door, excess, allowance and
charge, with the speedup. Read with h5py as a user would.
Usage: python3 bench/gpu/check_timing.py RESULTS_DIR"""
import glob
import os
import statistics
import sys

import h5py

us = lambda s: f"{s * 1e6:8.2f}"
print(f"{'candidate':<26} {'role':<15} {'shape':<34} {'span':>8} {'wall':>8} {'b.span':>8} {'b.wall':>8} "
      f"{'door':>8} {'excess':>8} {'allow':>8} {'charged':>8} {'speedup':>8}   (us)")
charged = timed = 0
for path in sorted(glob.glob(os.path.join(sys.argv[1], "**", "*.h5"), recursive=True)):
    if path.endswith("campaign.h5"):
        continue
    with h5py.File(path, "r") as f:
        if "candidates/instances" not in f:
            continue
        rows = f["candidates/instances"][()]
        names = rows.dtype.names
        for i, r in enumerate(rows):
            key = f"candidates/timings/{i:04d}"
            if key not in f or "door_s" not in names:
                continue
            d = f[key]
            labels = [x.decode() if isinstance(x, bytes) else x for x in d.attrs["rows"]]
            if "candidate_span" not in labels:
                continue
            data = d[()]
            t = {name: list(data[k]) for k, name in enumerate(labels)}
            med = lambda name: statistics.median(t[name])
            text = lambda k: r[k].decode() if isinstance(r[k], bytes) else str(r[k])
            timed += 1
            charged += r["clock_charged_s"] > 0
            print(f"{text('candidate'):<26} {text('role'):<15} {text('shape'):<34} {us(med('candidate_span'))} "
                  f"{us(med('candidate_wall'))} {us(med('baseline'))} {us(med('baseline_wall'))} {us(r['door_s'])} "
                  f"{us(r['clock_excess_s'])} {us(r['clock_allowance_s'])} {us(r['clock_charged_s'])} "
                  f"{r['speedup']:8.2f}")
print(f"{timed} timed device instance(s); the clock charged {charged}")
