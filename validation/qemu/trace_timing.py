#!/usr/bin/env python3
"""Where the time of one request goes in the real QEMU + Linux guest.

Reads the trace logs that validation/qemu/run.sh writes with TRACE_TIMING=1
(QEMU trace events with thread id and microseconds, `-msg timestamp=on`) and
the serial logs that name each fio run, and prints per run the distribution
(p25/p50/p75/p90, mean, in microseconds) of
  reaction   an SQ doorbell MMIO write -> QEMU's main loop fetching the first
             command of that queue after it (pci_nvme_io_cmd): the wake-up
             and scheduling delay of the thread that runs the device
  device     pci_nvme_io_cmd -> the MSI-X raised for it, split into
   command   pci_nvme_io_cmd -> its completion queued
             (pci_nvme_enqueue_req_completion, same cid), and
   post      a completion queued -> the MSI-X raised on its vector
             (the main loop works through both without sleeping: its CPU
             time per command and per completion posted)
  irq->cqdb  MSI-X raised -> the guest's CQ doorbell MMIO write on that queue
             (interrupt delivery + the guest's nvme_irq reaping, under TCG)
  cqdb->sqdb a CQ doorbell MMIO write -> the next SQ doorbell MMIO write on the
             same queue pair (the guest's reap + fio + submit path; at
             iodepth 1 with the doorbell buffer off, one whole guest turn)
and the SQ entries fetched per main-loop pass (consecutive io_cmd lines of one
queue on the main-loop thread with no doorbell in between).

Runs are delimited by the MMIO reads of BAR0 + 0xE00 / 0xE04 that the guest's
/init makes before and after each fio run.

With --csv OUT it also writes, per configuration, what its iodepth=1 runs
measured (ioeventfd=off boots only), for `nvmesim validate --timing OUT`: the median reaction, and the
wake-ups that stalled: the share of reactions above STALL_US (200 us, several
times what a wake-up on a free core takes) and, as stall_max_ns, twice their
mean delay beyond the median (the longest stall if stalls are uniform).

Usage: trace_timing.py [--csv OUT] WORKDIR TAG [TAG...]   (TAG as j1-db0-evoff)
"""
import re
import statistics
import sys

LINE = re.compile(r"^(\d+)@(\d+)\.(\d+):(\w+) (.*)$")


def quantiles(values):
    if not values:
        return "n=0"
    v = sorted(values)
    q = lambda p: v[min(len(v) - 1, int(p * (len(v) - 1)))]
    return "n=%d p25=%.0f p50=%.0f p75=%.0f p90=%.0f mean=%.0f" % (
        len(v), q(.25), q(.5), q(.75), q(.9), statistics.fmean(v))


def runs_of(serial_path):
    names = []
    for line in open(serial_path, errors="replace"):
        m = re.search(r"NVQ-RUN-BEGIN rw=(\S+) qd=(\d+) jobs=(\d+) rep=(\d+)", line)
        if m:
            names.append("rw=%s qd=%s jobs=%s rep=%s" % m.groups())
    return names


def events_by_run(trace_path):
    runs, current = [], None
    for line in open(trace_path, errors="replace"):
        m = LINE.match(line)
        if not m:
            continue
        tid, sec, usec, name, args = m.groups()
        t = int(sec) * 1_000_000 + int(usec)
        if name == "pci_nvme_mmio_read":
            if "addr 0xe00 " in args:
                current = []
            elif "addr 0xe04 " in args and current is not None:
                runs.append(current)
                current = None
            continue
        if current is not None:
            current.append((t, int(tid), name, args))
    return runs


def number(args, key):
    m = re.search(key + r" (\d+)", args)
    return int(m.group(1)) if m else None


def analyse(events):
    """Per-run lists (microseconds): reaction, device, irq->cqdb, cqdb->sqdb,
    SQEs per pass, and the device time split into command (fetch -> its
    completion queued) and post (completion queued -> the MSI-X raised)."""
    reaction, device, irq_cqdb, cqdb_sqdb, batch = [], [], [], [], []
    command, post = [], []
    fetched = {}         # cid -> time of its pci_nvme_io_cmd
    queued = {}          # cqid -> time of the oldest completion not yet signalled
    pending_sqdb = {}    # sqid -> time of the oldest doorbell not yet followed by a fetch
    last_cmd = {}        # sqid -> time of the last fetch (for the device figure)
    last_irq = {}        # vector -> time
    last_cqdb = {}       # cqid -> time
    run_q, run_len = None, 0
    for t, tid, name, args in events:
        if name == "pci_nvme_mmio_doorbell_sq":
            q = number(args, "sqid")
            pending_sqdb.setdefault(q, t)
            if q in last_cqdb:
                cqdb_sqdb.append(t - last_cqdb.pop(q))
            if run_q == q:
                batch.append(run_len)
                run_q, run_len = None, 0
        elif name == "pci_nvme_io_cmd":
            q = number(args, "sqid")
            if q in pending_sqdb:
                reaction.append(t - pending_sqdb.pop(q))
            last_cmd[q] = t
            cid = number(args, "cid")
            if cid is not None:
                fetched[cid] = t
            if run_q == q:
                run_len += 1
            else:
                if run_q is not None:
                    batch.append(run_len)
                run_q, run_len = q, 1
        elif name == "pci_nvme_enqueue_req_completion":
            cid, cq = number(args, "cid"), number(args, "cqid")
            if cid in fetched:
                command.append(t - fetched.pop(cid))
            queued.setdefault(cq, t)
        elif name == "pci_nvme_irq_msix":
            v = number(args, "vector")
            if v in queued:
                post.append(t - queued.pop(v))
            last_irq[v] = t
            if v in last_cmd:
                device.append(t - last_cmd.pop(v))
        elif name == "pci_nvme_mmio_doorbell_cq":
            q = number(args, "cqid")
            if q in last_irq:
                irq_cqdb.append(t - last_irq.pop(q))
            last_cqdb[q] = t
    if run_q is not None:
        batch.append(run_len)
    return reaction, device, irq_cqdb, cqdb_sqdb, batch, command, post


STALL_US = 200


def stall_figures(reaction):
    """(median, share above STALL_US, 2 x mean delay beyond the median of those)."""
    median = statistics.median(reaction)
    stalled = [r - median for r in reaction if r > STALL_US]
    share = len(stalled) / len(reaction)
    return median, share, (2 * statistics.fmean(stalled) if stalled else 0.0)


def main():
    args = sys.argv[1:]
    csv_out = None
    if args[:1] == ["--csv"]:
        if len(args) < 2:
            sys.exit("trace_timing.py: --csv needs a file name")
        csv_out, args = args[1], args[2:]
    if len(args) < 2:
        sys.exit("usage: trace_timing.py [--csv OUT] WORKDIR TAG [TAG...]")
    workdir = args[0]
    lines = []
    for tag in args[1:]:
        m = re.match(r"j(\d+)-db([01])-ev(on|off)$", tag)
        if not m:
            sys.exit("trace_timing.py: tag '%s' is not jJOBS-dbDBBUF-evIOEVENTFD (e.g. j1-db0-evoff)" % tag)
        names = runs_of("%s/serial-%s.log" % (workdir, tag))
        runs = events_by_run("%s/trace-%s.log" % (workdir, tag))
        qd1 = {"reaction": [], "irq_cqdb": [], "cqdb_sqdb": [], "command": [], "post": [], "runs": 0}
        for i, events in enumerate(runs):
            reaction, device, irq_cqdb, cqdb_sqdb, batch, command, post = analyse(events)
            if i < len(names) and " qd=1 " in names[i] + " ":
                qd1["reaction"] += reaction
                qd1["irq_cqdb"] += irq_cqdb
                qd1["cqdb_sqdb"] += cqdb_sqdb
                qd1["command"] += command
                qd1["post"] += post
                qd1["runs"] += 1
            print("%s %s" % (tag, names[i] if i < len(names) else "run %d" % i))
            print("  reaction   " + quantiles(reaction))
            print("  device     " + quantiles(device))
            print("   command   " + quantiles(command))
            print("   post      " + quantiles(post))
            print("  irq->cqdb  " + quantiles(irq_cqdb))
            print("  cqdb->sqdb " + quantiles(cqdb_sqdb))
            print("  SQEs/pass  " + quantiles(batch))
        # Only ioeventfd=off lines: with ioeventfd a doorbell write signals an
        # eventfd and is not traced, so its wake-up cannot be timed; the
        # main loop's wake-up is the same, and validate uses these lines.
        if qd1["reaction"] and m.group(3) == "off":
            median, share, stall_max = stall_figures(qd1["reaction"])
            print("%s iodepth=1, %d runs: reaction median %.0f us, stalled (> %d us) %.4f, stall_max %.0f us"
                  % (tag, qd1["runs"], median, STALL_US, share, stall_max))
            lines.append("%s,%s,%s,1,%d,%d,%.0f,%.4f,%.0f,%.0f,%.0f,%.0f,%.0f" % (
                m.group(1), "on" if m.group(2) == "1" else "off", m.group(3), qd1["runs"],
                len(qd1["reaction"]), median * 1000, share, stall_max * 1000,
                statistics.median(qd1["irq_cqdb"]) * 1000 if qd1["irq_cqdb"] else 0,
                statistics.median(qd1["cqdb_sqdb"]) * 1000 if qd1["cqdb_sqdb"] else 0,
                statistics.median(qd1["command"]) * 1000 if qd1["command"] else 0,
                statistics.median(qd1["post"]) * 1000 if qd1["post"] else 0))
    if csv_out:
        with open(csv_out, "w") as f:
            f.write("numjobs,dbbuf,ioeventfd,iodepth,runs,wakeups,reaction_p50_ns,stall_share,stall_max_ns,"
                    "irq_to_cq_doorbell_p50_ns,cq_to_sq_doorbell_p50_ns,command_p50_ns,post_p50_ns\n")
            for line in lines:
                f.write(line + "\n")


if __name__ == "__main__":
    main()
