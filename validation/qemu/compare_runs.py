#!/usr/bin/env python3
"""The real system against itself: two reference CSVs of the same matrix,
judged with `nvmesim validate`'s band rules (doorbell writes per I/O within
+-0.15 or inside the first file's min..max; IOPS ratio to the row's
iodepth=1 row within +-25%). The share of rows in band is what a perfect
model could expect to score when run-to-run variation is all that is left.

Usage: compare_runs.py FIRST.csv SECOND.csv
"""
import csv
import sys


def load(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        key = (r["rw"], r["bs"], int(r["iodepth"]), r["numjobs"], r["dbbuf"], r["ioeventfd"])
        rows[key] = r
    return rows


def ratio(rows, key):
    qd1 = rows[key[:2] + (1,) + key[3:]]
    return float(rows[key]["iops"]) / float(qd1["iops"])


def doorbell_in_band(second, first, lo, hi):
    if abs(second - first) <= 0.15:
        return True
    return lo != "" and hi != "" and float(lo) <= second <= float(hi)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compare_runs.py FIRST.csv SECOND.csv")
    a, b = load(sys.argv[1]), load(sys.argv[2])
    keys = [k for k in a if k in b]
    if not keys:
        sys.exit("compare_runs.py: no configuration in both files")
    inside = {"sq": 0, "cq": 0, "iops": 0, "all": 0}
    for k in keys:
        ra, rb = a[k], b[k]
        sq = doorbell_in_band(float(rb["sq_mmio_per_io"]), float(ra["sq_mmio_per_io"]),
                              ra["sq_mmio_per_io_min"], ra["sq_mmio_per_io_max"])
        cq = doorbell_in_band(float(rb["cq_mmio_per_io"]), float(ra["cq_mmio_per_io"]),
                              ra["cq_mmio_per_io_min"], ra["cq_mmio_per_io_max"])
        io = abs(ratio(b, k) / ratio(a, k) - 1) <= 0.25
        inside["sq"] += sq
        inside["cq"] += cq
        inside["iops"] += io
        inside["all"] += sq and cq and io
    n = len(keys)
    print("%d configurations in both; in band: SQ %d, CQ %d, IOPS ratio %d, all three %d of %d (%.1f%%)"
          % (n, inside["sq"], inside["cq"], inside["iops"], inside["all"], n, 100.0 * inside["all"] / n))


if __name__ == "__main__":
    main()
