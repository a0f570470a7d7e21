"""Reads the file written by fk_h5_sample_writer with h5py and numpy (no pandas
needed) and checks that it looks the way docs/results-schema.md says: tables are
structured arrays (what pandas.DataFrame takes directly), strings are UTF-8, bools
are numpy bools, big arrays are gzip-compressed. Exits non-zero on any mismatch."""
import sys

import h5py
import numpy as np

UNICODE = "\u03a9\u03bc\u03ad\u03b3\u03b1 \u2014 \u65e5\u672c\u8a9e \u00b5s"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def main(path):
    with h5py.File(path, "r") as f:
        # Root attributes.
        a = f.attrs
        check(a["title"] == UNICODE and isinstance(a["title"], str), f"title: {a['title']!r}")
        check(a["schema_version"] == 3 and a["schema_version"].dtype == np.int64, "schema_version")
        check(a["ratio"] == 0.5 and a["ratio"].dtype == np.float64, "ratio")
        check(a["complete"].dtype == np.bool_ and bool(a["complete"]) is True, f"complete: {a['complete']!r}")
        check(a["failed"].dtype == np.bool_ and bool(a["failed"]) is False, "failed")
        check(a["ranks"].dtype == np.int64 and list(a["ranks"]) == [0, 1, 2, 3], "ranks")
        check(list(a["scales"]) == [0.25, 4.0], "scales")
        check(list(a["tags"]) == ["smoke", "\u03b2eta"], f"tags: {a['tags']!r}")

        # The table: one compound dataset, loadable in one call.
        ds = f["kernel_stage/timings/ops"]
        check(ds.attrs["median_us_unit"] == "microseconds", "table attribute")
        check(ds.maxshape == (None,), f"table maxshape {ds.maxshape}")
        rows = ds[()]
        check(isinstance(rows, np.ndarray) and rows.shape == (3,), f"rows shape {rows.shape}")
        check(rows.dtype.names == ("op", "calls", "tp", "median_us", "passed"), f"columns {rows.dtype.names}")
        check(rows.dtype["calls"] == np.dtype("<i8"), f"calls dtype {rows.dtype['calls']}")
        check(rows.dtype["tp"] == np.dtype("<i4"), f"tp dtype {rows.dtype['tp']}")
        check(rows.dtype["median_us"] == np.dtype("<f8"), "median_us dtype")
        check(rows.dtype["passed"] == np.dtype("bool"), f"passed dtype {rows.dtype['passed']}")
        info = h5py.check_string_dtype(rows.dtype["op"])
        check(info is not None and info.encoding == "utf-8" and info.length is None, f"op dtype {info}")
        ops = [v.decode("utf-8") if isinstance(v, bytes) else v for v in rows["op"]]
        check(ops == ["rms_norm", "silu_and_mul", UNICODE], f"op values {ops!r}")
        check(list(rows["calls"]) == [10, 20, 30], "calls values")
        check(list(rows["tp"]) == [1, 2, 4], "tp values")
        check(list(rows["median_us"]) == [12.5, 3.25, 0.125], "median_us values")
        check(list(rows["passed"]) == [True, False, True], "passed values")
        try:
            import pandas as pd  # not required; when present, the documented call must work
        except ImportError:
            pd = None
        if pd is not None:
            df = pd.DataFrame(f["kernel_stage/timings/ops"][()])
            check(list(df.columns) == ["op", "calls", "tp", "median_us", "passed"], "DataFrame columns")
            check(len(df) == 3, "DataFrame rows")

        empty = f["kernel_stage/timings/empty"]
        check(empty.shape == (0,) and empty.dtype.names == ("op", "median_us"), "empty table")
        check(empty[()].shape == (0,), "empty table read")

        # Arrays.
        check(np.array_equal(f["arrays/f64"][()], np.arange(6, dtype="<f8").reshape(2, 3)), "f64")
        check(f["arrays/f64"].dtype == np.dtype("<f8"), "f64 dtype")
        check(f["arrays/f32"].dtype == np.dtype("<f4") and list(f["arrays/f32"][()]) == [-1.5, 2.5], "f32")
        check(list(f["arrays/i64"][()]) == [-9000000000, 9000000000], "i64")
        check(f["arrays/i32"].shape == (1, 2) and f["arrays/i32"].dtype == np.dtype("<i4"), "i32")
        check(f["arrays/u8"].dtype == np.dtype("u1") and list(f["arrays/u8"][()]) == [0, 128, 255], "u8")
        check(f["arrays/empty"].shape == (0,) and f["arrays/empty"][()].size == 0, "empty array")
        big = f["arrays/big"]
        check(big.compression == "gzip" and big.chunks is not None and big.shuffle, "big storage")
        expected = (np.arange(200000) % 1000).astype("<f8").reshape(400, 500)
        check(np.array_equal(big[()], expected), "big values")
        check(f["arrays/f32"].compression is None, "small arrays are not compressed")
    print("h5py reader check: ok")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: h5_reader_check.py <file.h5>")
    main(sys.argv[1])
