#!/usr/bin/env python3
"""Turn the guest's serial logs of run.sh DEVICE=virtio-blk into the CSV.

One boot per tag vb-j<numjobs>-q<num-queues>-<none|poll0|polldef>.  The
serial log holds one NVQ-RUN-BEGIN..NVQ-RUN-END block per fio run: the
guest's kicks sent, kick decisions and virtblk_done calls so far
(NVQ-BEFORE / NVQ-AFTER; counted as --count says, -1 when not counted), the
virtio0-req.N lines of /proc/interrupts before and after, and fio's JSON.
parse.py reads the blocks.
"""
import argparse
import re
import statistics
import sys
from collections import OrderedDict

from parse import irq_total, parse_serial

COLUMNS = ("qemu_version,linux_version,fio_version,accel,device,rw,bs,iodepth,numjobs,"
           "iothread,poll_max_ns,queues,repeats,ios,iops,iops_min,iops_max,"
           "clat_p50_ns,clat_p99_ns,kicks_per_io,kicks_per_io_min,kicks_per_io_max,"
           "kick_checks_per_io,kick_checks_per_io_min,kick_checks_per_io_max,"
           "irq_per_io,irq_per_io_min,irq_per_io_max,done_calls_per_io,guest_queues,counted_by").split(",")

TAG_RE = re.compile(r"^vb-j(\d+)-q(\d+)-(none|poll0|polldef)$")


def guest_info(path):
    """blk-mq hardware queues the guest made (NVQ-INFO queues=N) and the
    negotiated feature bits (/sys/block/vda/device/features: one character
    per bit, bit 0 first), or None."""
    queues = features = None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"NVQ-INFO queues=(\d+)", line)
            if m:
                queues = int(m.group(1))
            m = re.match(r"NVQ-INFO features=([01]+)", line)
            if m:
                features = m.group(1)
    return queues, features


# include/uapi/linux/virtio_ring.h
VIRTIO_RING_F_INDIRECT_DESC = 28
VIRTIO_RING_F_EVENT_IDX = 29


def fmt4(x):
    return "" if x is None else "%.4f" % x


def main():
    ap = argparse.ArgumentParser()
    for k in ("qemu-version", "linux-version", "fio-version", "accel", "poll-default",
              "workdir", "out"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--count", required=True, choices=("module", "kprobes", "none"))
    ap.add_argument("tags", nargs="+")
    a = ap.parse_args()
    counted = a.count != "none"

    rows = OrderedDict()
    seen = {}
    problems = 0
    for tag in a.tags:
        m = TAG_RE.match(tag)
        if not m:
            sys.exit("parse_virtio.py: bad tag %r" % tag)
        jobs, vqs, mode = int(m.group(1)), int(m.group(2)), m.group(3)
        # The main loop's AioContext never polls (util/async.c aio_context_new
        # sets poll_max_ns 0; only an iothread object sets it).
        poll = {"none": "0", "poll0": "0", "polldef": a.poll_default}[mode]
        iothread = "none" if mode == "none" else "io0"
        serial = "%s/serial-%s.log" % (a.workdir, tag)
        runs = parse_serial(serial)
        gq, features = guest_info(serial)
        # QEMU's virtio-blk offers both by default (event_idx, indirect_desc).
        for bit, name in ((VIRTIO_RING_F_EVENT_IDX, "EVENT_IDX"), (VIRTIO_RING_F_INDIRECT_DESC, "INDIRECT_DESC")):
            if not features or len(features) <= bit or features[bit] != "1":
                print("parse_virtio.py: %s: VIRTIO_RING_F_%s not negotiated" % (tag, name), file=sys.stderr)
                problems += 1
        # virtio_blk.c init_vq: min(num-queues, nr_cpu_ids) request queues.
        if gq != min(vqs, jobs):
            print("parse_virtio.py: %s: guest has %s queues, expected %d" % (tag, gq, min(vqs, jobs)),
                  file=sys.stderr)
            problems += 1
        if not runs:
            print("parse_virtio.py: %s: no fio runs" % tag, file=sys.stderr)
            problems += 1
        for run in runs:
            if run.get("rc") != 0 or "fio" not in run:
                print("parse_virtio.py: %s: fio failed for %s qd=%d rep=%d"
                      % (tag, run["rw"], run["qd"], run["rep"]), file=sys.stderr)
                problems += 1
                continue
            rd = run["fio"]["jobs"][0]["read"]
            ios = rd["total_ios"]
            d = [x - y for x, y in zip(run["after"], run["before"])]
            pct = rd["clat_ns"]["percentile"]
            sample = {
                "ios": ios, "iops": rd["iops"],
                "p50": pct["50.000000"], "p99": pct["99.000000"],
                "kicks": d[0] / ios if counted else None,
                "checks": d[1] / ios if counted else None,
                "done": d[2] / ios if counted else None,
                "irq": (irq_total(run["irq_after"]) - irq_total(run["irq_before"])) / ios,
            }
            if counted and sample["kicks"] > sample["checks"]:
                print("parse_virtio.py: %s qd=%d rep=%d: more kicks than kick decisions"
                      % (tag, run["qd"], run["rep"]), file=sys.stderr)
                problems += 1
            key = (run["rw"], run["qd"], jobs, iothread, poll, vqs)
            rows.setdefault(key, []).append(sample)
            seen[key] = gq

    with open(a.out, "w") as out:
        out.write(",".join(COLUMNS) + "\n")
        for (rw, qd, jobs, iothread, poll, vqs), s in rows.items():
            col = lambda k: [x[k] for x in s]
            mean = lambda k: None if not counted and k in ("kicks", "checks", "done") else statistics.mean(col(k))
            lo = lambda k: None if mean(k) is None else min(col(k))
            hi = lambda k: None if mean(k) is None else max(col(k))
            vals = [a.qemu_version, a.linux_version, a.fio_version, a.accel, "virtio-blk", rw, "4096",
                    str(qd), str(jobs), iothread, poll, str(vqs), str(len(s)), str(sum(col("ios"))),
                    "%.1f" % mean("iops"), "%.1f" % min(col("iops")), "%.1f" % max(col("iops")),
                    str(round(mean("p50"))), str(round(mean("p99"))),
                    fmt4(mean("kicks")), fmt4(lo("kicks")), fmt4(hi("kicks")),
                    fmt4(mean("checks")), fmt4(lo("checks")), fmt4(hi("checks")),
                    fmt4(mean("irq")), fmt4(lo("irq")), fmt4(hi("irq")),
                    fmt4(mean("done")), str(seen[(rw, qd, jobs, iothread, poll, vqs)]), a.count]
            assert len(vals) == len(COLUMNS)
            out.write(",".join(vals) + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
