#!/usr/bin/env python3
"""nvmesim's prediction beside each row of results-virtio.csv.

Usage: compare_virtio.py [--nvmesim ./build/nvmesim] [--preset qemu-7.2,tcg]
                         [--set PARAM=VALUE ...] [--number-ios N] RESULTS.csv

Runs the model once per row (--single-run, seed 1) with the row's settings:
--device=virtio-blk --hv.notify=ioeventfd (QEMU's virtio-blk-pci default,
kept under TCG), --hv.device_thread=mainloop for iothread=none, else
iothread with --hv.poll_max_ns=<poll_max_ns>, --virtio.queues=<queues>,
--numjobs, --iodepth, --rw, --bs.  Prints, per row, real / model: kicks sent
per I/O (the model's MMIO doorbell writes per I/O), kick decisions per I/O
(its SQ doorbell updates), interrupts per I/O, clat p50 and p99 (us) and
IOPS.  The model is not changed or fitted here: --set only passes
what-ifs (e.g. a calibrated guest cost) to every run.
"""
import argparse
import csv
import json
import subprocess
import sys


def model_args(row, a):
    args = [a.nvmesim, "--preset", a.preset, "--device=virtio-blk", "--hv.notify=ioeventfd",
            "--virtio.queues=" + row["queues"], "--numjobs=" + row["numjobs"],
            "--iodepth=" + row["iodepth"], "--rw=" + row["rw"], "--bs=" + row["bs"],
            "--number_ios=%d" % a.number_ios, "--seed=1", "--single-run", "--output-format=json"]
    if row["iothread"] == "none":
        args.append("--hv.device_thread=mainloop")
    else:
        args += ["--hv.device_thread=iothread", "--hv.poll_max_ns=" + row["poll_max_ns"]]
    for s in a.set:
        k, _, v = s.partition("=")
        args.append("--%s=%s" % (k, v))
    return args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvmesim", default="./build/nvmesim")
    ap.add_argument("--preset", default="qemu-7.2,tcg")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--number-ios", type=int, default=10000)
    ap.add_argument("--csv", help="also write the table as CSV here")
    ap.add_argument("results")
    a = ap.parse_args()

    out_rows = []
    hdr = ("numjobs iothread poll queues qd | kicks real model | checks real model | "
           "irq real model | p50us real model | p99us real model | iops real model")
    print(hdr)
    with open(a.results) as f:
        for row in csv.DictReader(f):
            p = subprocess.run(model_args(row, a), capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("compare_virtio.py: nvmesim failed (%d) on %s: %s"
                         % (p.returncode, " ".join(model_args(row, a)), p.stderr.strip()))
            m = json.loads(p.stdout)
            ios = m["ios"]
            mod = {
                "kicks": m["doorbells"]["sq"]["mmio"] / ios,
                "checks": m["doorbells"]["sq"]["updates"] / ios,
                "irq": m["per_io"]["interrupts"],
                "p50": m["clat_ns"]["percentile"]["50.000000"] / 1000.0,
                "p99": m["clat_ns"]["percentile"]["99.000000"] / 1000.0,
                "iops": m["iops"],
            }
            real = {
                "kicks": float(row["kicks_per_io"]) if row["kicks_per_io"] else float("nan"),
                "checks": float(row["kick_checks_per_io"]) if row["kick_checks_per_io"] else float("nan"),
                "irq": float(row["irq_per_io"]),
                "p50": float(row["clat_p50_ns"]) / 1000.0,
                "p99": float(row["clat_p99_ns"]) / 1000.0,
                "iops": float(row["iops"]),
            }
            print("%s %s %s %s %s | %.2f %.2f | %.2f %.2f | %.2f %.2f | %.0f %.0f | %.0f %.0f | %.0f %.0f"
                  % (row["numjobs"], row["iothread"], row["poll_max_ns"], row["queues"], row["iodepth"],
                     real["kicks"], mod["kicks"], real["checks"], mod["checks"], real["irq"], mod["irq"],
                     real["p50"], mod["p50"], real["p99"], mod["p99"], real["iops"], mod["iops"]))
            out_rows.append([row["numjobs"], row["iothread"], row["poll_max_ns"], row["queues"], row["iodepth"]]
                            + ["%.4f" % real[k] for k in ("kicks", "checks", "irq")]
                            + ["%.4f" % mod[k] for k in ("kicks", "checks", "irq")]
                            + ["%.0f" % real[k] for k in ("p50", "p99")] + ["%.0f" % mod[k] for k in ("p50", "p99")]
                            + ["%.1f" % real["iops"], "%.1f" % mod["iops"]])
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("numjobs,iothread,poll_max_ns,queues,iodepth,kicks_real,checks_real,irq_real,"
                    "kicks_model,checks_model,irq_model,clat_p50_us_real,clat_p99_us_real,"
                    "clat_p50_us_model,clat_p99_us_model,iops_real,iops_model\n")
            for r in out_rows:
                f.write(",".join(r) + "\n")


if __name__ == "__main__":
    main()
