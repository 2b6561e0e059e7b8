// hv.* (and host.cores): the hypervisor around the device, in one visit
// because --list-params interleaves what goes to several models: the
// exits (Hypervisor::Params), the emulation threads (HostThread::Params)
// and how System lays the threads out. How a doorbell reaches the device's
// engine (hv.notify, hv.timer_delay, hv.fault) is the engine's own table
// (models::NotifierParams in models/host/doorbell_notifier.h).
#pragma once

#include <systemc>

#include "nvmesim/models/host/host_thread.h"
#include "nvmesim/models/hv/hypervisor.h"
#include "nvmesim/models/sim/param_visit.h"

namespace nvmesim::platform {

// Where the device emulation runs (hv.device_thread).
enum class DeviceThread { Vcpu, Mainloop, Iothread };
inline constexpr fw::EnumEntry<DeviceThread> device_threads[] = {
    {DeviceThread::Vcpu, "vcpu"}, {DeviceThread::Mainloop, "mainloop"}, {DeviceThread::Iothread, "iothread"}};

struct HvParams {
  double cpu_ghz{};                  // converts `cyc` times (Config reads it; kept for the record)
  models::Hypervisor::Params exits;  // bql: set by System
  models::HostThread::Params threads;  // the iothreads' (the main loop does not poll)
  unsigned iothreads{};
  bool bql{};                        // QEMU's global lock: System makes one
  sc_core::sc_time bql_handoff;      // a waiter's wake-up after the unlock
  unsigned host_cores{};
  sc_core::sc_time host_wakeup_wait;
  DeviceThread device_thread{};

  static constexpr const char* param_prefix = "hv";
  static constexpr fw::EnumEntry<bool> doorbell_accesses[] = {{false, "mmio"}, {true, "pio"}};
  template <class V>
  void visit(V& v) {
    using namespace models::param_units;
    v.real(cpu_ghz, "cpu_ghz", "2.3", "GHz", 0.1, 10, "host CPU clock; converts 'cyc' times");
    v.time(exits.exit_mmio, "exit_mmio", "5100cyc", 0, 1 * MS, "trapped MMIO write exit (doorbell)");
    v.time(exits.exit_mmio_other, "exit_mmio_other", "5100cyc", 0, 1 * MS, "other trapped MMIO access exit");
    v.time(exits.exit_ioeventfd, "exit_ioeventfd", "2250cyc", 0, 1 * MS, "MMIO write exit through ioeventfd");
    v.real(exits.exit_return_share, "exit_return_share", "0", "", 0, 1,
           "share of each trapped exit after its handler (back into the guest): the device sees the "
           "write, or the ioeventfd fires, that much before the vCPU resumes (0 = at the exit's end)");
    v.choice(exits.pio_doorbells, "doorbell_access", "mmio", doorbell_accesses, "",
             "what the guest writes a doorbell with: MMIO (NVMe) or port I/O (what-if)");
    v.time(exits.exit_pio, "exit_pio", "3800cyc", 0, 1 * MS, "port I/O exit (hv.doorbell_access=pio)");
    v.time(exits.exit_pio_ioeventfd, "exit_pio_ioeventfd", "1150cyc", 0, 1 * MS,
           "port I/O exit through an ioeventfd");
    v.integer(iothreads, "iothreads", "1", "threads", 1, 64,
              "hv.device_thread=iothread: iothreads; I/O queues are spread round robin");
    // A time like every other (QEMU's poll-max-ns took ns: a bare number is
    // still ns); hv.poll_max is the name that fits the unit, the old one stays
    // for existing command lines and JSON's config keys.
    v.time(threads.poll_max, "poll_max_ns", "32768ns", 0, 1 * S,
           "iothread adaptive busy polling: longest window (0 = never poll), as QEMU's poll-max-ns; "
           "also named hv.poll_max; a bare number is ns",
           models::ParamOptions{false, true, "hv.poll_max"});
    v.integer(threads.poll_grow, "poll_grow", "0", "", 0, 1024, "polling window growth factor (0 = 2), as QEMU");
    v.integer(threads.poll_shrink, "poll_shrink", "0", "", 0, 1024,
              "polling window shrink divisor (0 = drop to 0), as QEMU");
    v.flag(exits.virtual_eoi, "apicv", "off", "APIC virtualization: EOI without an exit");
    v.flag(bql, "bql", "off", "QEMU's global lock: the main loop and MMIO handlers in QEMU exclude each other");
    v.time(exits.bql_hold, "bql_hold", "1us", 0, 1 * MS,
           "hv.bql: how long an MMIO handler in QEMU holds the global lock");
    v.time(bql_handoff, "bql_handoff", "0ns", 0, 1 * MS,
           "hv.bql: a thread that found the lock taken sleeps (a pthread mutex) and runs this long "
           "after the unlock wakes it (0 = at once)");
    v.flag(exits.bql_interrupts, "bql_interrupts", "off",
           "hv.bql: the vCPU takes the global lock to take an interrupt and for its EOI, each for "
           "hv.bql_hold (QEMU TCG: cpu_handle_interrupt, the xAPIC's MMIO EOI)");
    v.choice(threads.wakeup, "wakeup", "measured", models::wakeup_models, "",
             "wake-up delay of a sleeping host thread and of a vCPU that scheduled out after a halt: "
             "measured = one draw per sleep from the eventfd -> ppoll delays measured on this project's "
             "host (validation/host/wakeup-idle*.csv), at the sleep's idle time; fixed = "
             "hv.dispatch_latency + hv.dispatch_jitter and hv.halt_wakeup");
    v.time(threads.dispatch_latency, "dispatch_latency", "2us", 0, 10 * MS,
           "hv.wakeup=fixed: host thread wake-up to start of processing");
    v.time(threads.dispatch_jitter, "dispatch_jitter", "0ns", 0, 100 * MS,
           "hv.wakeup=fixed: mean extra wake-up delay of a sleeping host thread, exponentially distributed "
           "(scheduler and lock waits on a busy host; 0 = none)");
    v.real(threads.dispatch_stall_share, "dispatch_stall_share", "0", "", 0, 1,
           "share of a sleeping host thread's wake-ups that stall (kept off a core by the host's "
           "scheduler; measured by validation/qemu/trace_timing.py; 0 = none)");
    v.time(threads.dispatch_stall_max, "dispatch_stall_max", "0ns", 0, 100 * MS,
           "longest wake-up stall; a stall is drawn uniformly from 0 to this");
    v.time(threads.dispatch_cost, "dispatch_cost", "500ns", 0, 1 * MS,
           "host CPU time per dispatch of the device emulation (main-loop overhead)");
    v.time(exits.halt_poll_max, "halt_poll", "0ns", 0, 1 * S,
           "KVM halt polling: longest window a halted vCPU polls before it schedules out (KVM's "
           "halt_poll_ns, adaptive from 10 us; 0 = never poll)");
    v.time(exits.halt_wakeup, "halt_wakeup", "0ns", 0, 10 * MS,
           "hv.wakeup=fixed: a halted vCPU that scheduled out: its interrupt to running in the guest "
           "again (host scheduler wake-up and VM entry)");
    v.time(exits.inject, "inject", "1us", 0, 1 * MS, "interrupt injection exit on the vCPU");
    v.time(exits.exit_eoi, "exit_eoi", "1us", 0, 1 * MS, "EOI exit");
    v.flag(exits.posted_interrupts, "posted_interrupts", "off", "posted interrupts: injection without an exit");
    v.time(exits.exit_ipi, "exit_ipi", "1us", 0, 1 * MS,
           "IPI exit on the sending vCPU: a wake-up's reschedule IPI to another vCPU's sleeping job is an "
           "x2APIC ICR write, an MSR-write exit handled in KVM's fast path (kvm_x2apic_icr_write); "
           "assumed as hv.exit_eoi, no source; 0 = no exit at all (TCG: the target's interrupt flag)");
    v.flag(exits.ipi_virtualization, "ipiv", "off",
           "IPI virtualization (Intel IPIv, Sapphire Rapids): the guest sends IPIs without an exit");
    // host: the machine the hypervisor runs on.
    v.integer(host_cores, "host.cores", "0", "cores", 0, 1024,
              "host cores shared by vCPU and emulation threads (0 = one per thread)");
    v.time(host_wakeup_wait, "host.wakeup_wait", "0ns", 0, 100 * MS,
           "longest wait for a core of a host thread that wakes while every core is taken, drawn "
           "uniformly, or until a core frees (CFS's sched_min_granularity: 1.5ms on 2 cores; 0 = none)");
    v.choice(device_thread, "device_thread", "mainloop", device_threads, "", "where the device emulation runs");
    v.flag(exits.passthrough, "passthrough", "off",
           "the NVMe device passed through (VFIO) as a real SSD: BAR accesses without an exit unless their "
           "host page is trapped, no emulation thread, no doorbell buffer");
    v.flag(exits.msix_bar_mmap, "msix_bar_mmap", "on",
           "hv.passthrough: the host maps pages holding the MSI-X table and PBA too (Linux 4.16, QEMU 2.12); "
           "off: those pages trap");
    v.choice(exits.page_bytes, "page_size", "4k", models::Hypervisor::page_sizes, "",
             "hv.passthrough: host page size, the unit VFIO maps and traps (ppc64: 64k)");
  }
};

}  // namespace nvmesim::platform
