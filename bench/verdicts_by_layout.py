"""Counts the candidate instance verdicts of a results folder's job files by layout
(candidates/instances), with the most common reasons of the ones not PASSED, read with
h5py. Usage: python3 bench/verdicts_by_layout.py RESULTS_DIR"""
import collections
import glob
import os
import sys

import h5py


def text(v):
    return v.decode() if isinstance(v, bytes) else v


counts, reasons = collections.Counter(), collections.Counter()
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.h5"))):
    with h5py.File(path, "r") as f:
        if "candidates/instances" not in f:
            continue
        layout = text(f.attrs["layout"])
        for row in f["candidates/instances"][()]:
            verdict = text(row["verdict"])
            counts[(layout, verdict)] += 1
            if verdict != "PASSED":
                reasons[text(row["reason"])[:100]] += 1
for (layout, verdict), n in sorted(counts.items()):
    print(f"{layout:<12} {verdict:<12} {n}")
print(f"total: {sum(counts.values())} instances, "
      f"{sum(n for (_, v), n in counts.items() if v == 'PASSED')} PASSED")
for reason, n in reasons.most_common(5):
    print(f"  {n} x {reason}")
