// The builtin parameter list: every model parameter, by component.
//
// To add a parameter: one line in its component's block (keep the blocks in
// this order and names unique). Ranges are inclusive and in base units
// (ns for times, bytes for sizes); the default must lie inside them. The help
// text is one line; it is what --list-params shows.
#include "platform/params.h"

namespace nvmesim::platform {

namespace {

constexpr double NS = 1, US = 1e3, MS = 1e6, S = 1e9;
constexpr double KiB = 1024.0, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

ParamSpec time(const char* name, const char* def, double min, double max, const char* help) {
  return {name, ParamKind::Time, def, "time", min, max, {}, help, false, false, ""};
}
ParamSpec size(const char* name, const char* def, double min, double max, const char* help) {
  return {name, ParamKind::Size, def, "bytes", min, max, {}, help, false, false, ""};
}
ParamSpec integer(const char* name, const char* def, const char* unit, double min, double max,
                  const char* help) {
  return {name, ParamKind::Integer, def, unit, min, max, {}, help, false, false, ""};
}
ParamSpec real(const char* name, const char* def, const char* unit, double min, double max,
               const char* help) {
  return {name, ParamKind::Real, def, unit, min, max, {}, help, false, false, ""};
}
ParamSpec boolean(const char* name, const char* def, const char* help) {
  return {name, ParamKind::Bool, def, "", 0, 0, {}, help, false, false, ""};
}
ParamSpec choice(const char* name, const char* def, std::vector<std::string> choices,
                 const char* unit, const char* help) {
  return {name, ParamKind::Choice, def, unit, 0, 0, std::move(choices), help, false, false, ""};
}

}  // namespace

void register_builtin_params(ParamRegistry& r) {
  // fio (flat names): the workload.
  r.add(choice("rw", "randread", {"read", "write", "randread", "randwrite", "randrw"}, "",
               "I/O pattern, as fio's rw"));
  r.add(size("bs", "4k", 512, 1 * MiB, "block size of each I/O (at most nvme.mdts allows; not split)"));
  r.add(integer("iodepth", "32", "I/Os", 1, 4095, "I/Os kept in flight per job"));
  r.add(integer("numjobs", "1", "jobs", 1, 64, "jobs, one per vCPU and I/O queue pair"));
  r.add(time("runtime", "0s", 0, 3600 * S, "measured interval (0 = until number_ios)"));
  ParamSpec number_ios = integer("number_ios", "200000", "I/Os", 0, 1e10,
                                 "I/Os each job completes, as fio (0 = until runtime); k, m, g "
                                 "multiply by 1024 as in fio");
  number_ios.count_suffixes = true;
  r.add(number_ios);
  r.add(size("size", "1g", 4 * KiB, 1 * TiB, "region of the namespace the jobs address"));
  r.add(integer("rwmixread", "50", "%", 0, 100, "percentage of reads for rw=randrw"));
  r.add(integer("seed", "1", "", 0, 9223372036854775807.0, "random seed (same seed, same run)"));
  r.add(integer("iodepth_batch_submit", "1", "I/Os", 1, 4095,
                "I/Os submitted together, one SQ doorbell update per batch (fio's)"));
  r.add(integer("iodepth_batch_complete_min", "1", "I/Os", 1, 4095,
                "I/Os a job waits for before it reaps (fio's; its queue full, it reaps then)"));
  r.add(integer("iodepth_batch_complete_max", "0", "I/Os", 0, 4095,
                "most I/Os one reap takes (fio's; 0 = iodepth_batch_complete_min)"));
  r.add(choice("verify", "off", {"off", "pattern"}, "",
               "pattern: writes carry a per-block pattern that reads of written blocks check"));

  // sim: the simulation kernel.
  r.add(time("sim.quantum", "1us", 1 * NS, 1 * MS, "the vCPUs' time quantum (temporal decoupling)"));
  r.add(time("sim.stall_timeout", "10ms", 1 * US, 100 * S,
             "simulated time without progress before the run is declared stalled"));

  // mem: guest memory.
  r.add(size("mem.size", "256m", 16 * MiB, 3 * GiB, "guest RAM (below the 3.5 GiB MMIO hole)"));
  r.add(time("mem.latency", "0ns", 0, 1 * US, "per-access latency seen by DMA"));

  // guest: the guest driver on the vCPUs.
  r.add(time("guest.submit_cost", "1500ns", 0, 1 * MS,
             "block layer + driver CPU work per command"));
  r.add(time("guest.complete_cost", "1000ns", 0, 1 * MS, "driver CPU work per completion"));
  r.add(time("guest.irq_entry", "500ns", 0, 1 * MS, "guest interrupt handler entry"));
  r.add(integer("guest.io_queue_entries", "1024", "entries", 2, 65536,
                "entries of each I/O submission and completion queue"));
  r.add(choice("guest.io_prp_fault", "none", {"none", "misaligned"}, "",
               "fault injection: every I/O's PRP1 off dword alignment (PRP Offset Invalid; the run fails)"));
  r.add(choice("guest.dbbuf_fault", "none", {"none", "misaligned", "zero", "same", "outside"}, "",
               "fault injection: Doorbell Buffer Config with a bad PRP1/PRP2 (refused; MMIO fallback)"));
  r.add(integer("guest.io_cq_entries", "0", "entries", 0, 65536,
                "entries of each I/O completion queue (0 = as the SQ; else 2..65536)"));
  r.add(choice("guest.completion", "irq", {"irq", "poll"}, "",
               "completion path: interrupts or polling the CQ"));
  r.add(time("guest.poll_interval", "1us", 1 * NS, 1 * MS,
             "CQ polling period for guest.completion=poll"));
  r.add(boolean("guest.admin_shadow", "off",
                "use the shadow doorbell for the admin queue too (Linux never does)"));
  r.add(boolean("guest.dbbuf_full_barrier", "on",
                "full barrier between the shadow store and the EventIdx load (off: Google's old driver)"));
  r.add(choice("guest.need_event", "linux", {"linux", "inclusive"}, "",
               "doorbell test: linux (new-idx-1)<(new-old), inclusive (new-idx)<=(new-old) as SPDK"));
  r.add(time("guest.store_visibility", "20ns", 0, 10 * US,
             "how long a store can sit in the store buffer before it is visible"));
  r.add(integer("guest.irq_coalescing_thr", "0", "CQEs", 0, 256,
                "Set Features 0x08 at bring-up: interrupt after this many CQEs (0 = not configured; needs guest.irq_coalescing_time > 0, TIME 0 = no delay)"));
  r.add(time("guest.irq_coalescing_time", "0us", 0, 25.5 * MS,
             "Set Features 0x08: or this long after the first held one (multiple of 100 us)"));

  // nvme: the controller.
  r.add(integer("nvme.mqes", "4095", "entries", 1, 65535, "CAP.MQES, maximum queue entries (0's based)"));
  r.add(integer("nvme.dstrd", "0", "", 0, 3, "CAP.DSTRD, doorbell stride (4 << dstrd bytes)"));
  r.add(integer("nvme.max_io_queues", "64", "queues", 1, 1024, "I/O queue pairs the controller offers"));
  r.add(choice("nvme.dbbuf", "spec", {"off", "spec", "vendor"}, "",
               "doorbell buffer: off, NVMe 1.3 (admin 0x7C), or vendor extension (admin 0xC0)"));
  r.add(choice("nvme.sq_eventidx", "echo", {"echo", "lag", "park", "never"}, "",
               "controller's SQ EventIdx update policy"));
  r.add(choice("nvme.cq_eventidx", "auto", {"echo", "lag", "park", "never", "auto"}, "",
               "controller's CQ EventIdx update policy (auto: echo for spec, never for vendor)"));
  r.add(choice("nvme.mmio_doorbell_value", "auto", {"auto", "use", "ignore"}, "",
               "take the value of an MMIO doorbell write (auto: use for spec, ignore for vendor)"));
  r.add(time("nvme.cmd_cost", "1us", 0, 1 * MS, "host CPU time per command processed"));
  r.add(time("nvme.cqe_cost", "300ns", 0, 1 * MS, "host CPU time per completion posted"));
  r.add(time("nvme.enable_latency", "1us", 0, 1 * S, "CC.EN=1 to CSTS.RDY=1"));
  r.add(choice("nvme.backend", "null", {"null", "latency", "ram"}, "",
               "storage backend: null (instant), fixed latency, or RAM disk"));
  r.add(time("nvme.backend_latency", "10us", 0, 1 * S, "backend service time per I/O"));
  r.add(integer("nvme.backend_concurrency", "0", "I/Os", 0, 65536,
                "I/Os the backend serves at once (0 = unlimited)"));
  r.add(size("nvme.capacity", "1g", 1 * MiB, 16 * TiB, "namespace size"));
  r.add(choice("nvme.lba_bytes", "512", {"512", "4096"}, "bytes", "logical block size"));
  r.add(integer("nvme.mdts", "5", "", 0, 10,
                "maximum data transfer size, 2^mdts memory pages (0 = no limit)"));

  // pcie: the root complex and the link.
  r.add(choice("pcie.mode", "emulated", {"emulated", "link"}, "",
               "emulated device (host memory copies) or a PCIe link model"));
  r.add(integer("pcie.gen", "3", "", 1, 5, "link generation (pcie.mode=link)"));
  r.add(choice("pcie.lanes", "4", {"1", "2", "4", "8", "16"}, "lanes", "link width"));
  r.add(choice("pcie.mps", "256", {"128", "256", "512", "1024", "2048", "4096"}, "bytes",
               "max payload size"));
  r.add(choice("pcie.mrrs", "512", {"128", "256", "512", "1024", "2048", "4096"}, "bytes",
               "max read request size"));
  r.add(integer("pcie.tlp_overhead", "24", "bytes", 0, 64, "header and framing bytes per TLP"));
  r.add(time("pcie.read_rtt", "700ns", 0, 100 * US, "round trip of a DMA read request"));
  r.add(real("pcie.host_copy_gbps", "10", "GB/s", 0.1, 1000,
             "host memcpy bandwidth of a device thread: every DMA incl. data, any backend (pcie.mode=emulated)"));
  r.add(time("pcie.emulated_access", "20ns", 0, 10 * US,
             "fixed cost of one emulated DMA access (pcie.mode=emulated)"));

  // hv: the hypervisor.
  r.add(real("hv.cpu_ghz", "2.3", "GHz", 0.1, 10, "host CPU clock; converts 'cyc' times"));
  r.add(time("hv.exit_mmio", "5100cyc", 0, 1 * MS, "trapped MMIO write exit (doorbell)"));
  r.add(time("hv.exit_mmio_other", "5100cyc", 0, 1 * MS, "other trapped MMIO access exit"));
  r.add(time("hv.exit_ioeventfd", "2250cyc", 0, 1 * MS, "MMIO write exit through ioeventfd"));
  r.add(choice("hv.notify", "deferred", {"sync", "deferred", "ioeventfd", "timer"}, "",
               "how a doorbell reaches the device: in the exit, deferred to its thread, ioeventfd, "
               "or QEMU 2.x's timer"));
  r.add(time("hv.timer_delay", "500ns", 0, 1 * MS,
             "hv.notify=timer: delay of QEMU's SQ/CQ timers (QEMU 2.x's 500 ns)"));
  r.add(choice("hv.doorbell_access", "mmio", {"mmio", "pio"}, "",
               "what the guest writes a doorbell with: MMIO (NVMe) or port I/O (what-if)"));
  r.add(time("hv.exit_pio", "3800cyc", 0, 1 * MS, "port I/O exit (hv.doorbell_access=pio)"));
  r.add(time("hv.exit_pio_ioeventfd", "1150cyc", 0, 1 * MS, "port I/O exit through an ioeventfd"));
  r.add(choice("hv.fault", "none", {"none", "eventfd_not_cleared", "eventfd_spin"}, "",
               "inject Ming Lin's uncleared ioeventfd: eventfd_not_cleared loses later wake-ups, "
               "eventfd_spin keeps the fd readable so its thread spins (as QEMU's poll saw it)"));
  r.add(integer("hv.iothreads", "1", "threads", 1, 64,
                "hv.device_thread=iothread: iothreads; I/O queues are spread round robin"));
  // A time like every other (QEMU's poll-max-ns took ns: a bare number is
  // still ns); hv.poll_max is the name that fits the unit, the old one stays
  // for existing command lines and JSON's config keys.
  ParamSpec poll_max = time("hv.poll_max_ns", "32768ns", 0, 1 * S,
                            "iothread adaptive busy polling: longest window (0 = never poll), as "
                            "QEMU's poll-max-ns; also named hv.poll_max; a bare number is ns");
  poll_max.bare_ns = true;
  poll_max.alias = "hv.poll_max";
  r.add(poll_max);
  r.add(integer("hv.poll_grow", "0", "", 0, 1024, "polling window growth factor (0 = 2), as QEMU"));
  r.add(integer("hv.poll_shrink", "0", "", 0, 1024,
                "polling window shrink divisor (0 = drop to 0), as QEMU"));
  r.add(boolean("hv.apicv", "off", "APIC virtualization: EOI without an exit"));
  r.add(boolean("hv.bql", "off",
                "QEMU's global lock: the main loop and MMIO handlers in QEMU exclude each other"));
  r.add(time("hv.bql_hold", "1us", 0, 1 * MS,
             "hv.bql: how long an MMIO handler in QEMU holds the global lock"));
  r.add(time("hv.dispatch_latency", "2us", 0, 10 * MS,
             "host thread wake-up to start of processing"));
  r.add(time("hv.dispatch_jitter", "0ns", 0, 100 * MS,
             "mean extra wake-up delay of a sleeping host thread, exponentially distributed "
             "(scheduler and lock waits on a busy host; 0 = none)"));
  r.add(time("hv.dispatch_cost", "500ns", 0, 1 * MS,
             "host CPU time per dispatch of the device emulation (main-loop overhead)"));
  r.add(time("hv.inject", "1us", 0, 1 * MS, "interrupt injection exit on the vCPU"));
  r.add(time("hv.exit_eoi", "1us", 0, 1 * MS, "EOI exit"));
  r.add(boolean("hv.posted_interrupts", "off", "posted interrupts: injection without an exit"));

  // host: the machine the hypervisor runs on.
  r.add(integer("host.cores", "0", "cores", 0, 1024,
                "host cores shared by vCPU and emulation threads (0 = one per thread)"));
  r.add(choice("hv.device_thread", "mainloop", {"vcpu", "mainloop", "iothread"}, "",
               "where the device emulation runs"));
}

}  // namespace nvmesim::platform
