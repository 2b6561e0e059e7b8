#!/usr/bin/env python3
"""Doorbell exits per I/O and IOPS over iodepth x doorbell buffer x exit cost.

    PYTHONPATH=python python3 examples/python/doorbell_sweep.py [--out plot.png] [--number-ios N]

Prints one row per point and, when matplotlib is installed, saves a plot of
exits per I/O against iodepth, one line per (buffer, exit cost)."""

import argparse
import sys

import nvmesim


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="doorbell_sweep.png", help="the plot (PNG)")
    parser.add_argument("--number-ios", type=int, default=5000, help="I/Os per point")
    parser.add_argument("--jobs", type=int, default=None, help="points at once (default: all cores)")
    args = parser.parse_args()

    grid = {"iodepth": [1, 2, 4, 8, 16, 32],
            "nvme.dbbuf": ["off", "spec"],
            "hv.exit_mmio": ["2000cyc", "10000cyc"]}
    rows = nvmesim.sweep(grid, {"number_ios": args.number_ios}, jobs=args.jobs)
    records = rows.to_dict("records") if hasattr(rows, "to_dict") else rows

    print("%7s %6s %10s %12s %10s" % ("iodepth", "dbbuf", "exit_mmio", "IOPS", "exits/io"))
    for r in records:
        print("%7d %6s %10s %12.0f %10.3f" % (r["iodepth"], r["nvme.dbbuf"], r["hv.exit_mmio"],
                                            r["iops"], r["per_io.exits"]))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return 0
    fig, ax = plt.subplots(figsize=(6, 4))
    for dbbuf in grid["nvme.dbbuf"]:
        for cost in grid["hv.exit_mmio"]:
            pts = [r for r in records if r["nvme.dbbuf"] == dbbuf and r["hv.exit_mmio"] == cost]
            ax.plot([r["iodepth"] for r in pts], [r["per_io.exits"] for r in pts], marker="o",
                    label="dbbuf=%s, exit=%s" % (dbbuf, cost))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("iodepth")
    ax.set_ylabel("doorbell exits per I/O")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print("plot: %s" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
