// The figures of one run, defined as in PRODUCT.md, and their output as
// fio-like text or JSON.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/guest/fio_latency.h"
#include "nvmesim/models/guest/latency_histogram.h"
#include "nvmesim/models/hv/vm_exit.h"
#include "nvmesim/platform/report/json_out.h"
#include "nvmesim/platform/report/pcie_figures.h"

namespace nvmesim::platform {

struct DoorbellFigures {
  uint64_t updates = 0, mmio = 0, suppressed = 0;
  uint64_t updates_with_dbbuf = 0;  // denominator of the hit rate
  uint64_t suppressed_with_dbbuf = 0;
};

// One direction's I/Os (fio json+'s "read" / "write" sections), with fio's
// latencies (models/guest/fio_latency.h) and the driver's own.
struct DirectionFigures {
  uint64_t ios = 0, bytes = 0;
  models::LatencyStat slat, clat, lat, driver_lat;
  void merge(const DirectionFigures& o) {
    ios += o.ios;
    bytes += o.bytes;
    slat.merge(o.slat);
    clat.merge(o.clat);
    lat.merge(o.lat);
    driver_lat.merge(o.driver_lat);
  }
};

struct VcpuFigures {
  double guest_ns = 0, exit_ns = 0, idle_ns = 0;
  uint64_t ios = 0, interrupts = 0;
  DirectionFigures read, write;
  models::IoDepthCounts depths;
  double sim_time_ns = 0;  // its job's start to its last completion
  double start_ns = 0;     // its job's start (the jobs it waited for had finished), from the measured phase start
  double done_ns = 0;      // when its job finished (after its last completion's doorbell), same origin
};

struct DeviceThreadFigures {
  std::string name;
  double busy_ns = 0;  // working (polling is added with iothreads)
  double poll_ns = 0;
  uint64_t dispatches = 0;
  uint64_t sleep_wakeups = 0, poll_wakeups = 0;  // requests served after sleeping / while polling
};

// A job file's section (fio job), with several sections or an ordering
// (stonewall, wait_for): what the report shows of each.
struct JobSection {
  std::string name;
  std::vector<std::pair<std::string, std::string>> options;  // the section's own, as written
  int group = 0;                       // fio's reporting group
  std::vector<std::string> waits_for;  // the jobs that must finish before it starts
  std::vector<unsigned> vcpus;         // the vCPUs running it (fio's numjobs clones)
};

struct RunResults {
  std::vector<std::pair<std::string, std::string>> config;  // every effective parameter
  double sim_time_ns = 0;  // the measured interval
  // What utilisation is a fraction of: the measured interval, extended to
  // the end of the vCPUs' work after their last completion (the CQ doorbell
  // write and the EOI that follow it). 0: sim_time_ns.
  double utilization_span_ns = 0;
  uint64_t ios = 0, read_ios = 0, write_ios = 0, read_bytes = 0, write_bytes = 0;
  uint64_t io_errors = 0;
  uint16_t first_error_status = 0;  // NVMe status field of the first failed I/O (lowest vCPU)
  uint64_t verified_reads = 0, verify_errors = 0;  // verify=pattern
  // fio's latencies of every I/O (reads and writes; fio reports them per
  // direction, below), and the driver's latency (PRODUCT's own metric: the
  // driver building the command to the driver finishing its completion).
  models::LatencyHistogram slat, clat, lat, driver_lat;
  DirectionFigures read, write;  // the same I/Os, split by direction
  models::IoDepthCounts depths;  // fio's IO depths / submit / complete
  DoorbellFigures sq, cq;
  bool dbbuf_active = false;
  uint8_t dbbuf_opcode = 0;
  uint16_t dbbuf_status = 0;  // Status Field of Doorbell Buffer Config (0: success or not sent)
  models::ExitStats exits;  // all vCPUs, measured phase
  std::vector<VcpuFigures> vcpus;
  std::vector<JobSection> sections;  // --job with several sections or an order; else empty
  std::vector<DeviceThreadFigures> device_threads;
  unsigned host_cores = 0;        // 0: one core per thread
  double overcommitted_ns = 0;    // time with more runnable threads than cores
  uint64_t lost_notifications = 0;     // ioeventfd wake-ups lost (hv.fault=eventfd_not_cleared)
  uint64_t stuck_handler_runs = 0;     // handlers re-run on a readable eventfd (hv.fault=eventfd_spin)
  uint64_t coalesced_completions = 0;  // completions whose interrupt was held back
  // Controller side, measured phase.
  uint64_t shadow_reads = 0, eventidx_writes = 0, interrupts_sent = 0, commands = 0;
  uint64_t dma_reads = 0, dma_writes = 0, async_events = 0, cq_full_waits = 0;
  PcieFigures pcie;  // pcie.mode=link: the link's TLPs, bytes and utilisation
  // Bring-up, reported apart.
  double bringup_ns = 0;
  models::ExitStats bringup_exits;
  bool bringup_ok = false;
  std::string bringup_error;
  // Stall watchdog.
  bool stalled = false;
  std::string stall_report;
  // device=virtio-blk: its status byte at the end; a virtio_error() (QEMU's
  // answer to malformed guest input) set DEVICE_NEEDS_RESET and stopped the
  // queues, so the I/Os in flight could never complete (Linux 6.1's
  // virtio_blk has no blk-mq timeout handler: it waits for them).
  bool virtio = false;
  uint8_t virtio_status = 0;
  bool device_needs_reset = false;
  std::string device_error;
  uint64_t unfinished_ios = 0;  // issued and never completed
  // SIGINT/SIGTERM stopped the run early: the figures cover the simulated
  // time up to the signal (platform/cli/interrupt.h).
  bool interrupted = false;
  int interrupt_signal = 0;
  // Every component's statistics group at the end of the run (measured
  // phase): the JSON "stats" object.
  stats::GroupValues stats;
  stats::GroupValues bringup_stats;  // the same at the end of bring-up (not written)
  // Host figures (--host-stats only).
  bool has_host = false;
  double wall_s = 0;
  uint64_t peak_rss_bytes = 0;
  // The model's SystemC process activations in the measured phase, by kind
  // (models/sim/activations.h): name, count.
  std::vector<std::pair<std::string, uint64_t>> activations;
  uint64_t activation_total() const {
    uint64_t t = 0;
    for (const auto& a : activations) t += a.second;
    return t;
  }

  double iops() const { return sim_time_ns > 0 ? double(ios) * 1e9 / sim_time_ns : 0; }
  double bw_bytes() const {
    return sim_time_ns > 0 ? double(read_bytes + write_bytes) * 1e9 / sim_time_ns : 0;
  }
  // suppressed / updates while the buffer was active; negative: undefined (null).
  static double hit_rate(const DoorbellFigures& d) {
    return d.updates_with_dbbuf ? double(d.suppressed_with_dbbuf) / double(d.updates_with_dbbuf)
                                : -1.0;
  }
  double per_io(uint64_t n) const { return ios ? double(n) / double(ios) : 0; }
};

// What the run came to, for the first line of a report and the JSON
// "outcome": "ok", "bringup_failed", "device_needs_reset" (virtio-blk broke
// on malformed guest input), "stalled" or "io_errors" (I/Os that completed
// with a non-zero NVMe status, or reads that failed verification).
// A stall wins over I/O errors: its figures are cut short anyway.
const char* run_outcome(const RunResults& r);
// "" for an ok run; otherwise one line starting with "STALLED:", "FAILED:"
// or "BRING-UP FAILED:" that says why.
std::string run_headline(const RunResults& r);

// The --output-format=json document; write_json writes it, starting at
// `indent` (nested in another document).
report::Json results_json(const RunResults& r);
void write_json(const RunResults& r, std::ostream& out, const std::string& indent = "");
void write_normal(const RunResults& r, std::ostream& out);

}  // namespace nvmesim::platform
