"""Reads the campaign files that run_campaigns.sh wrote the way users do: h5py
structured arrays that pandas.DataFrame takes in one call (pandas itself is not
required), whole-job copies equal to the job files, and the HTML report (written here
with `fk report --html`) as XML with one <svg> per chart.
Usage: campaign_readers.py FK WORK"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

fk, work = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def frame(rows):
    """What pandas.DataFrame(rows) does with a structured array: one column per field."""
    check(rows.ndim == 1 and rows.dtype.names, "summary table is not a 1-D structured array")
    return {name: rows[name] for name in rows.dtype.names}


def walk_datasets(group, prefix=""):
    out = {}
    for name, obj in group.items():
        path = prefix + "/" + name
        if isinstance(obj, h5py.Dataset):
            out[path] = obj
        else:
            out.update(walk_datasets(obj, path))
    return out


results = os.path.join(work, "a")
with h5py.File(os.path.join(results, "campaign.h5"), "r") as f:
    check(f.attrs["format"] == "fastkernels-campaign", "format attribute")
    check(int(f.attrs["schema_version"]) == 1, "schema_version")
    check(int(f.attrs["jobs"]) == 4, "jobs attribute")
    ids = sorted(f["jobs"].keys())
    check(len(ids) == 4, "4 job groups")

    jobs = frame(f["summary/jobs"][()])
    for col in ("job_id", "architecture", "family", "layout", "tp", "pp", "dp", "status", "wall_s",
                "kernels_total", "kernels_passed", "baseline_rel_err_vs_fp32", "baseline_top1_vs_fp32",
                "baseline_model_s", "baseline_compute_s", "baseline_comm_s"):
        check(col in jobs, "summary/jobs lacks " + col)
    check(h5py.check_string_dtype(f["summary/jobs"].dtype["job_id"]).encoding == "utf-8", "utf-8 strings")
    check(sorted(x.decode() for x in jobs["job_id"]) == ids, "summary/jobs ids = /jobs groups")
    check(sorted(jobs["tp"].tolist()) == [1, 1, 2, 2], "tp column")
    check(set(x.decode() for x in jobs["family"]) == {"llama", "mistral"}, "family from job_json")
    check(set(x.decode() for x in jobs["category"]) == {"Dense & MoE LLMs"}, "FastKernels category")
    check(jobs["baseline_model_s"].dtype == np.float64 and np.all(jobs["baseline_model_s"] > 0), "model times")
    check(np.all(jobs["baseline_comm_s"][jobs["tp"] == 2] > 0), "tp2 jobs communicate")
    check(np.all(jobs["baseline_comm_s"][jobs["tp"] == 1] == 0), "tp1 jobs do not")

    kernels = f["summary/kernels"][()]
    total = sum(len(f["jobs"][i]["kernel_stage/instances"]) for i in ids)
    check(len(kernels) == total, "summary/kernels has one row per job x instance")
    for row in kernels[:10]:
        inst = f["jobs"][row["job_id"].decode()]["kernel_stage/instances"][()]
        match = inst[inst["index"] == row["index"]][0]
        check(match["median_s"] == row["median_s"] and match["op"] == row["op"], "kernel row = job's instance")
    cands = f["summary/candidates"]
    check(len(cands) == 0 and "job_id" in cands.dtype.names, "baseline-only: empty candidates table with keys")

    # Every job group is a full copy of its job file.
    for i in ids:
        with h5py.File(os.path.join(results, i + ".h5"), "r") as src:
            g = f["jobs"][i]
            for k, v in src.attrs.items():
                w = g.attrs[k]
                check(np.array_equal(np.asarray(v), np.asarray(w)) if isinstance(v, np.ndarray) else v == w,
                      "attribute %s of %s" % (k, i))
            theirs, ours = walk_datasets(src), walk_datasets(g)
            check(sorted(theirs) == sorted(ours), "datasets of " + i)
            for path, d in theirs.items():
                a, b = d[()], ours[path][()]
                if a.dtype.names:
                    same = all(np.array_equal(a[n], b[n], equal_nan=a.dtype[n].kind == "f") for n in a.dtype.names)
                    check(same, "table %s of %s" % (path, i))
                else:
                    check(np.array_equal(a, b, equal_nan=True), "array %s of %s" % (path, i))

# The HTML report: well-formed XML, three kinds of chart, each drawn.
html = os.path.join(work, "report-h5py.html")
subprocess.run([fk, "report", "-q", os.path.join(work, "a", "campaign.h5"), "--html", html], check=True,
               stdout=subprocess.DEVNULL)
root = ET.parse(html).getroot()
svg_ns = "{http://www.w3.org/2000/svg}"
svgs = root.findall(".//" + svg_ns + "svg")
check(len(svgs) >= 3, "at least 3 charts, got %d" % len(svgs))
titles = [s.find(svg_ns + "title").text for s in svgs]
check(any("layout" in t for t in titles), "a speedup-by-layout chart")
check(any("error vs layer" in t for t in titles), "an error-by-layer chart")
check(any("Time split" in t for t in titles), "a time split chart")
for s, t in zip(svgs, titles):
    shapes = s.findall(".//" + svg_ns + "rect") + s.findall(".//" + svg_ns + "polyline")
    check(len(shapes) > 1, "chart '%s' draws something" % t)

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("ok: %d jobs, %d kernel rows, %d charts" % (len(ids), len(kernels), len(svgs)))
