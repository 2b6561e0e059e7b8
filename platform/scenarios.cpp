// The seeds' experiments. Every fixed value names its source; the one
// calibrated cost is fitted on the baseline's reported figure only.
#include "platform/scenarios.h"

namespace nvmesim::platform {

namespace {

// QEMU 2.x as the seeds ran it: the device in the main loop under the global
// lock, doorbells handled in QEMU (MMIO to userspace), SQ and CQ processing
// on 500 ns timers (hw/block/nvme.c of the time, quoted in the seeds).
const std::vector<std::pair<std::string, std::string>> kQemu2015 = {
    {"hv.device_thread", "mainloop"}, {"hv.notify", "timer"},        {"hv.timer_delay", "500ns"},
    {"hv.bql", "on"},                 {"hv.bql_hold", "2850cyc"},    {"hv.exit_mmio", "5100cyc"},
    {"hv.exit_ioeventfd", "2250cyc"}, {"bs", "4k"},
};

const std::vector<std::pair<std::string, std::string>> kQemuSources = {
    {"hv.notify=timer, hv.timer_delay=500ns", "the seeds' hw/block/nvme.c: timer_mod(sq->timer, now + 500)"},
    {"hv.bql=on", "QEMU 2.x runs MMIO handlers and the main loop under its global lock"},
    {"hv.bql_hold=2850cyc",
     "assumed: the handler holds the lock for the part of the exit spent in QEMU userspace, "
     "which ioeventfd removes: 5100 - 2250 cycles (Bonzini's Haswell-EP figures)"},
    {"hv.exit_mmio / hv.exit_ioeventfd", "haswell-ep preset: 5100 / 2250 cycles (Bonzini, in the seeds)"},
    {"nvme.dbbuf=vendor", "the seeds' device: SQ EventIdx only, MMIO values ignored, VID 0x1AE0"},
};

std::vector<std::pair<std::string, std::string>> with(
    std::vector<std::pair<std::string, std::string>> base,
    const std::vector<std::pair<std::string, std::string>>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

}  // namespace

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> list = {
      {"google-null",
       "stock driver vs the vendor extension: 4 jobs, QD32, 4 KiB randread, null device",
       "seeds: '[PATCH -kernel] nvme: improve performance for virtual NVMe devices' (Rob Nelson): "
       "about 200K vs 1000K read IOPS on a 4 core machine",
       "iops",
       {{"numjobs", "4"}, {"iodepth", "32"}, {"rw", "randread"}, {"bs", "4k"},
        {"nvme.backend", "null"}, {"hv.device_thread", "iothread"}, {"hv.iothreads", "4"},
        {"hv.exit_ioeventfd", "2250cyc"}},
       {{"numjobs=4, iodepth=32, randread 4k, null backend", "the fio command line in the seed"},
        {"hv.device_thread=iothread x4", "assumed: the VMM emulates each queue on its own thread"},
        {"guest costs", "nvmesim defaults (guest.submit_cost, guest.complete_cost, guest.irq_entry)"}},
       "hv.exit_mmio", 100, 200000,
       "the cost of a trapped doorbell write in that VMM, unknown from the seed",
       {{"stock driver (dbbuf off)", {{"nvme.dbbuf", "off"}}, 200000},
        {"vendor extension", {{"nvme.dbbuf", "vendor"}}, 1000000}}},
      {"qemu-vendor",
       "QEMU with the vendor extension: 1 job, QD32, 4 KiB randread",
       "seeds: '[PATCH -qemu] nvme: support Google vendor extension' (Mihai Rusu): about 20k IOPS "
       "with the original code, 85k with the extension (Xeon E5-1650 3.2 GHz)",
       "iops",
       with(kQemu2015, {{"numjobs", "1"}, {"iodepth", "32"}, {"rw", "randread"}, {"hv.cpu_ghz", "3.2"},
                        {"nvme.backend", "null"}}),
       with(kQemuSources, {{"hv.cpu_ghz=3.2", "the seed's Xeon E5-1650"}}),
       "hv.dispatch_cost", 100, 500000,
       "the main loop's CPU cost per dispatch on that host (glib loop, timer and AIO hand-off), "
       "unknown from the seed",
       {{"QEMU nvme (dbbuf off)", {{"nvme.dbbuf", "off"}}, 20000},
        {"vendor extension", {{"nvme.dbbuf", "vendor"}}, 85000}}},
      {"ramdisk",
       "QEMU nvme on a ram disk: 2 jobs, QD64, 4 KiB read",
       "seeds: '[RFC PATCH 0/2] Google extension to improve qemu-nvme performance' (Ming Lin): "
       "29 MB/s, 100 MB/s with the extension (virtio-blk 174 MB/s is for a later baseline)",
       "mb_s",
       with(kQemu2015, {{"numjobs", "2"}, {"iodepth", "64"}, {"rw", "read"}, {"nvme.backend", "ram"},
                        {"nvme.capacity", "1g"}}),
       with(kQemuSources, {{"test.job", "bs=4k iodepth=64 numjobs=2; [job1] rw=read overrides the global randread (seed)"}}),
       "hv.dispatch_cost", 100, 500000,
       "the main loop's CPU cost per dispatch on that host (glib loop, timer and AIO hand-off), "
       "unknown from the seed",
       {{"QEMU nvme (dbbuf off)", {{"nvme.dbbuf", "off"}}, 29},
        {"vendor extension", {{"nvme.dbbuf", "vendor"}}, 100}}},
      {"real-nvme",
       "QEMU nvme on a real NVMe: 8 jobs, QD64, 4 KiB read; extension, ioeventfd, fixed notifier",
       "seeds: Ming Lin's follow-ups: 108, 140 (extension), 190 (ioeventfd), 294 MB/s "
       "(ioeventfd with the notifier cleared); local NVMe 860 MB/s",
       "mb_s",
       with(kQemu2015, {{"numjobs", "8"}, {"iodepth", "64"}, {"rw", "read"},
                        {"nvme.backend", "latency"}, {"nvme.backend_latency", "300us"},
                        {"nvme.backend_concurrency", "64"}}),
       with(kQemuSources,
            {{"nvme.backend=latency 300us x64", "the local NVMe's 860 MB/s (seed): 64 in flight / 300 us"},
             {"hv.fault=eventfd_not_cleared", "the seeds' notifier without event_notifier_test_and_clear"}}),
       "hv.dispatch_cost", 100, 500000,
       "the main loop's CPU cost per dispatch on that host (glib loop, timer and AIO hand-off), "
       "unknown from the seed",
       {{"QEMU nvme (dbbuf off)", {{"nvme.dbbuf", "off"}}, 108},
        {"vendor extension", {{"nvme.dbbuf", "vendor"}}, 140},
        {"+ ioeventfd (eventfd not cleared)",
         {{"nvme.dbbuf", "vendor"}, {"hv.notify", "ioeventfd"}, {"hv.fault", "eventfd_not_cleared"}},
         190},
        {"+ ioeventfd, notifier fixed", {{"nvme.dbbuf", "vendor"}, {"hv.notify", "ioeventfd"}}, 294}}},
  };
  return list;
}

}  // namespace nvmesim::platform
