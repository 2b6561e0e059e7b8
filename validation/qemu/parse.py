#!/usr/bin/env python3
"""Turn the guest's serial logs and QEMU's trace logs of run.sh into the CSV.

One boot per tag j<numjobs>-db<0|1>-ev<off|on>.  The serial log holds one
NVQ-RUN-BEGIN..NVQ-RUN-END block per fio run (driver counters and nvme
I/O-queue interrupt lines before/after, fio JSON).  The QEMU trace log holds
the doorbell writes that reached the nvme MMIO handler; the guest read NVMe
register 0xE00 just before and 0xE04 just after each fio run, so the k-th
such window belongs to the k-th run block.
"""
import argparse
import json
import re
import statistics
import sys
from collections import OrderedDict

COLUMNS = ("qemu_version,linux_version,fio_version,accel,rw,bs,iodepth,numjobs,dbbuf,"
           "ioeventfd,repeats,ios,iops,iops_min,iops_max,clat_p50_ns,clat_p99_ns,"
           "sq_updates_per_io,cq_updates_per_io,sq_mmio_per_io,sq_mmio_per_io_min,"
           "sq_mmio_per_io_max,cq_mmio_per_io,cq_mmio_per_io_min,cq_mmio_per_io_max,"
           "irq_per_io,irq_per_io_min,irq_per_io_max,qemu_sq_mmio_per_io,"
           "qemu_cq_mmio_per_io,dbbuf_config_seen").split(",")

TAG_RE = re.compile(r"^j(\d+)-db([01])-ev(on|off)$")
DOORBELL_RE = re.compile(r"pci_nvme_mmio_doorbell_(sq|cq) (?:sq|cq)id (\d+) ")
MARK_BEGIN = re.compile(r"pci_nvme_mmio_read addr 0xe00 ")
MARK_END = re.compile(r"pci_nvme_mmio_read addr 0xe04 ")


def irq_total(lines):
    """Sum of all per-CPU counts of the nvme I/O-queue vectors (nvme0q1..)."""
    total = 0
    for line in lines:
        fields = line.split()[1:]  # drop "NN:"
        for f in fields:
            if not f.isdigit():
                break
            total += int(f)
    return total


def parse_serial(path):
    runs = []
    run = None
    json_lines = None
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\r\n")
            if json_lines is not None:
                if line.startswith("NVQ-JSON-END"):
                    run["fio"] = json.loads("\n".join(json_lines))
                    json_lines = None
                else:
                    json_lines.append(line)
                continue
            if line.startswith("NVQ-RUN-BEGIN"):
                kv = dict(w.split("=", 1) for w in line.split()[1:])
                run = {"rw": kv["rw"], "qd": int(kv["qd"]), "jobs": int(kv["jobs"]),
                       "rep": int(kv["rep"]), "irq_before": [], "irq_after": []}
            elif run is None:
                continue
            elif line.startswith("NVQ-BEFORE-IRQ"):
                run["irq_before"].append(line[len("NVQ-BEFORE-IRQ"):])
            elif line.startswith("NVQ-AFTER-IRQ"):
                run["irq_after"].append(line[len("NVQ-AFTER-IRQ"):])
            elif line.startswith("NVQ-BEFORE "):
                run["before"] = [int(x) for x in line.split()[1:5]]
            elif line.startswith("NVQ-AFTER "):
                run["after"] = [int(x) for x in line.split()[1:5]]
            elif line.startswith("NVQ-FIO-RC"):
                run["rc"] = int(line.split()[1])
            elif line.startswith("NVQ-JSON-BEGIN"):
                json_lines = []
            elif line.startswith("NVQ-RUN-END"):
                runs.append(run)
                run = None
    return runs


def parse_trace(path):
    """Per marked window: (SQ, CQ) doorbell writes on I/O queues; dbbuf seen."""
    windows = []
    current = None
    dbbuf_seen = False
    with open(path, errors="replace") as f:
        for line in f:
            m = DOORBELL_RE.search(line)
            if m:
                if current is not None and int(m.group(2)) > 0:
                    current[0 if m.group(1) == "sq" else 1] += 1
            elif MARK_BEGIN.search(line):
                current = [0, 0]
            elif MARK_END.search(line):
                if current is not None:
                    windows.append(tuple(current))
                current = None
            elif "pci_nvme_dbbuf_config" in line:
                dbbuf_seen = True
    return windows, dbbuf_seen


def sanity_check(rows):
    """Invariants of a correct run, printed per row that breaks one."""
    bad = 0
    for (rw, qd, jobs, dbbuf, ioeventfd), r in rows.items():
        name = "%s qd=%d jobs=%d dbbuf=%s ioeventfd=%s" % (rw, qd, jobs, dbbuf, ioeventfd)
        msgs = []
        if r["dbbuf_seen"] != (dbbuf == "on"):
            msgs.append("dbbuf_config_seen does not match dbbuf")
        for x in r["samples"]:
            if x["sq_mmio"] > x["sq_upd"] or x["cq_mmio"] > x["cq_upd"]:
                msgs.append("more MMIO writes than updates")
            if dbbuf == "off" and (x["sq_mmio"] != x["sq_upd"] or x["cq_mmio"] != x["cq_upd"]):
                msgs.append("suppressed updates without doorbell buffer")
            if ioeventfd == "off" and x["q_sq"] is not None and (
                    abs(x["q_sq"] - x["sq_mmio"]) > 1e-9 or abs(x["q_cq"] - x["cq_mmio"]) > 1e-9):
                msgs.append("guest MMIO writes %.4f/%.4f != QEMU trace %.4f/%.4f"
                            % (x["sq_mmio"], x["cq_mmio"], x["q_sq"], x["q_cq"]))
        for m in sorted(set(msgs)):
            print("parse.py: check failed: %s: %s" % (name, m), file=sys.stderr)
        bad += bool(msgs)
    return bad


def fmt4(x):
    return "" if x is None else "%.4f" % x


def main():
    ap = argparse.ArgumentParser()
    for k in ("qemu-version", "linux-version", "fio-version", "accel", "workdir", "out"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("tags", nargs="+")
    a = ap.parse_args()

    rows = OrderedDict()
    problems = 0
    for tag in a.tags:
        m = TAG_RE.match(tag)
        if not m:
            sys.exit("parse.py: bad tag %r" % tag)
        jobs, dbbuf, ioeventfd = int(m.group(1)), "on" if m.group(2) == "1" else "off", m.group(3)
        runs = parse_serial("%s/serial-%s.log" % (a.workdir, tag))
        windows, dbbuf_seen = parse_trace("%s/trace-%s.log" % (a.workdir, tag))
        if len(windows) != len(runs):
            print("parse.py: %s: %d fio runs but %d trace windows" % (tag, len(runs), len(windows)),
                  file=sys.stderr)
            problems += 1
        for i, run in enumerate(runs):
            if run.get("rc") != 0 or "fio" not in run:
                print("parse.py: %s: fio failed for %s qd=%d rep=%d" % (tag, run["rw"], run["qd"], run["rep"]),
                      file=sys.stderr)
                problems += 1
                continue
            rd = run["fio"]["jobs"][0]["read"]
            ios = rd["total_ios"]
            d = [x - y for x, y in zip(run["after"], run["before"])]
            irqs = irq_total(run["irq_after"]) - irq_total(run["irq_before"])
            pct = rd["clat_ns"]["percentile"]
            sample = {
                "ios": ios, "iops": rd["iops"],
                "p50": pct["50.000000"], "p99": pct["99.000000"],
                "sq_upd": d[0] / ios, "sq_mmio": d[1] / ios,
                "cq_upd": d[2] / ios, "cq_mmio": d[3] / ios,
                "irq": irqs / ios,
                "q_sq": windows[i][0] / ios if i < len(windows) else None,
                "q_cq": windows[i][1] / ios if i < len(windows) else None,
            }
            key = (run["rw"], run["qd"], jobs, dbbuf, ioeventfd)
            rows.setdefault(key, {"samples": [], "dbbuf_seen": dbbuf_seen})["samples"].append(sample)

    problems += sanity_check(rows)
    with open(a.out, "w") as out:
        out.write(",".join(COLUMNS) + "\n")
        for (rw, qd, jobs, dbbuf, ioeventfd), r in rows.items():
            s = r["samples"]
            col = lambda k: [x[k] for x in s]
            mean = lambda k: statistics.mean(col(k))
            qemu_ok = ioeventfd == "off" and all(x["q_sq"] is not None for x in s)
            vals = [a.qemu_version, a.linux_version, a.fio_version, a.accel, rw, "4096", str(qd),
                    str(jobs), dbbuf, ioeventfd, str(len(s)), str(sum(col("ios"))),
                    "%.1f" % mean("iops"), "%.1f" % min(col("iops")), "%.1f" % max(col("iops")),
                    str(round(mean("p50"))), str(round(mean("p99"))),
                    fmt4(mean("sq_upd")), fmt4(mean("cq_upd")),
                    fmt4(mean("sq_mmio")), fmt4(min(col("sq_mmio"))), fmt4(max(col("sq_mmio"))),
                    fmt4(mean("cq_mmio")), fmt4(min(col("cq_mmio"))), fmt4(max(col("cq_mmio"))),
                    fmt4(mean("irq")), fmt4(min(col("irq"))), fmt4(max(col("irq"))),
                    fmt4(mean("q_sq") if qemu_ok else None), fmt4(mean("q_cq") if qemu_ok else None),
                    "1" if r["dbbuf_seen"] else "0"]
            assert len(vals) == len(COLUMNS)
            out.write(",".join(vals) + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
