#include "nvmesim/platform/validate/cost_ranges.h"

#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform {

namespace {
constexpr double kUs = 1000;
}  // namespace

const std::vector<CostRange>& cost_ranges() {
  // Cycles are at hv.cpu_ghz's default 2.3 GHz, as the presets' are.
  static const std::vector<CostRange> table = {
      // Paolo Bonzini's measured MMIO write exit to user space with a trivial
      // handler (qemu-devel thread 'nvme: support Google vendor extension';
      // the haswell-ep and ivybridge-i7 presets): 5100 cycles on Haswell-EP,
      // 2.2 us. QEMU's doorbell handler under the global lock comes on top
      // (accel/kvm/kvm-all.c kvm_cpu_exec -> hw/nvme/ctrl.c nvme_mmio_write);
      // the upper end is an assumption (no public figure of the whole path).
      {"hv.exit_mmio", 2 * kUs, 8 * kUs,
       "lower: 5100-7000 cycles measured (Bonzini, qemu-devel 'nvme: support Google vendor extension'), "
       "2.2 us at 2.3 GHz; upper: assumption, the exit plus QEMU's nvme_mmio_write under the global lock"},
      {"hv.exit_mmio_other", 2 * kUs, 8 * kUs, "as hv.exit_mmio"},
      // The same measurements with an ioeventfd: KVM signals the eventfd in
      // the kernel (virt/kvm/eventfd.c ioeventfd_write) and resumes the
      // guest: 2250 cycles on Haswell-EP (0.98 us), 3000 on Ivy Bridge i7;
      // 10% below for faster hosts. Upper: the signal has to wake the device
      // thread asleep in ppoll; such a write costs the writer p50 3.1-3.2 us
      // on this project's host (validation/host/eventfd-write-cost.csv, sleeper).
      {"hv.exit_ioeventfd", 0.9 * kUs, 3.5 * kUs,
       "lower: 2250-3000 cycles measured (Bonzini), 0.98 us at 2.3 GHz, less 10%; upper: an eventfd write "
       "that wakes a thread asleep in ppoll, p50 3.1-3.2 us (validation/host/eventfd-write-cost.csv)"},
      {"hv.exit_pio", 1.5 * kUs, 8 * kUs,
       "lower: 3800-4100 cycles measured (Bonzini), 1.65 us at 2.3 GHz, less 10%; upper: as hv.exit_mmio"},
      {"hv.exit_pio_ioeventfd", 0.45 * kUs, 3.5 * kUs,
       "lower: 1150-1800 cycles measured (Bonzini), 0.5 us at 2.3 GHz, less 10%; upper: as hv.exit_ioeventfd"},
      // One pass of the device thread's loop with no device work: ppoll's
      // return, the eventfd read (event_notifier_test_and_clear), timers and
      // bottom halves looked at, the global lock taken and dropped
      // (util/main-loop.c os_host_main_loop_wait, util/aio-posix.c
      // aio_dispatch). A few syscalls of ~0.2 us each (an eventfd write with
      // nobody waiting: p50 170 ns on this host) make the lower end; the
      // upper end is an assumption. The wake-up itself is not in it
      // (hv.wakeup draws it).
      {"hv.dispatch_cost", 0.2 * kUs, 5 * kUs,
       "lower: a syscall or two (an eventfd write: p50 170 ns, validation/host/eventfd-write-cost.csv); "
       "upper: assumption; the wake-up is not part of it (hv.wakeup)"},
      // Measured in QEMU 7.2 on this project's host at iodepth 1 (trace
      // events pci_nvme_io_cmd -> pci_nvme_enqueue_req_completion, and on to
      // the MSI-X): medians 20-27 us per command and 8-10 us per completion
      // (validation/qemu/results-timing.csv), under TCG, whose vCPU threads
      // hold the global lock often: upper ends. Lower ends are assumptions.
      {"nvme.cmd_cost", 0.5 * kUs, 27 * kUs,
       "upper: QEMU 7.2's main loop per command measured, median 20-27 us (validation/qemu/results-timing.csv "
       "command_p50_ns, TCG); lower: assumption"},
      {"nvme.cqe_cost", 0.2 * kUs, 10 * kUs,
       "upper: QEMU 7.2's main loop per completion to its MSI-X measured, median 8-10 us "
       "(validation/qemu/results-timing.csv post_p50_ns, TCG); lower: assumption"},
      // An irqfd MSI is one eventfd write (KVM's waiter is a wait-queue
      // callback, virt/kvm/eventfd.c irqfd_wakeup); measured on this host.
      {"hv.msi_irqfd_cost", 0.15 * kUs, 3.5 * kUs,
       "an eventfd write, p50 168-171 ns with nobody asleep on it, 3.1-3.2 us waking a sleeper "
       "(validation/host/eventfd-write-cost.csv)"},
  };
  return table;
}

const CostRange* cost_range(const std::string& param) {
  for (const CostRange& r : cost_ranges())
    if (param == r.param) return &r;
  return nullptr;
}

bool in_physical_range(const CostRange& range, double value_ns) {
  return value_ns >= range.lo_ns && value_ns <= range.hi_ns;
}

std::string range_text(const CostRange& range) { return format_time_ns(range.lo_ns) + ".." + format_time_ns(range.hi_ns); }

std::string range_note(const std::string& param, double value_ns) {
  const CostRange* r = cost_range(param);
  if (!r) return "no range documented";
  return std::string(in_physical_range(*r, value_ns) ? "within" : "outside") + " its physical range " + range_text(*r);
}

}  // namespace nvmesim::platform
