// The results of one run and their output as fio-like text or JSON; the
// figures, defined as in PRODUCT.md, come from platform/report/derived_figures.h.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "nvmesim/firmware/sim/statistics.h"
#include "nvmesim/models/guest/fio_latency.h"
#include "nvmesim/models/guest/latency_histogram.h"
#include "nvmesim/platform/report/json_out.h"

namespace nvmesim::platform {

// One direction's latencies (fio json+'s "read" / "write" sections): fio's
// (models/guest/fio_latency.h) and the driver's own. Its I/O and byte counts
// are the statistics tree's (vcpu<N>.read_ios, ...).
struct DirectionLatency {
  models::LatencyStat slat, clat, lat, driver_lat;
  void merge(const DirectionLatency& o) {
    slat.merge(o.slat);
    clat.merge(o.clat);
    lat.merge(o.lat);
    driver_lat.merge(o.driver_lat);
  }
};

// What a vCPU's statistics group does not hold: its latency distributions,
// IO depths and the times of its job. Its counts and busy times are the
// tree's "vcpu<N>" group, its utilisation the derived figures'.
struct VcpuFigures {
  DirectionLatency read, write;
  models::IoDepthCounts depths;
  double sim_time_ns = 0;  // its job's start to its last completion
  double start_ns = 0;     // its job's start (the jobs it waited for had finished), from the measured phase start
  double done_ns = 0;      // when its job finished (after its last completion's doorbell), same origin
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

// One run. Its counts are the statistics tree (`stats`), and every figure
// derived from them is read through figure() (platform/report/
// derived_figures.h, each defined there once); this holds what the tree
// does not: the configuration, the measured interval's times, latency
// distributions, the outcome (bring-up, stall, device status, signal), the
// job file's sections and the host process's figures.
struct RunResults {
  std::vector<std::pair<std::string, std::string>> config;  // every effective parameter
  // The device's backend (null, latency, ram): nvme.backend, or virtio-blk's
  // virtio.backend (or its old spelling; platform/config/device_backend.h).
  // Empty: nvme.backend's.
  std::string backend;
  double sim_time_ns = 0;  // the measured interval
  // What utilisation is a fraction of: the measured interval, extended to
  // the end of the vCPUs' work after their last completion (the CQ doorbell
  // write and the EOI that follow it). 0: sim_time_ns.
  double utilization_span_ns = 0;
  uint16_t first_error_status = 0;  // NVMe status field of the first failed I/O (lowest vCPU)
  // fio's latencies of every I/O (reads and writes; fio reports them per
  // direction, below), and the driver's latency (PRODUCT's own metric: the
  // driver building the command to the driver finishing its completion).
  models::LatencyHistogram slat, clat, lat, driver_lat;
  DirectionLatency read, write;  // the same I/Os, split by direction
  models::IoDepthCounts depths;  // fio's IO depths / submit / complete
  bool dbbuf_active = false;
  uint8_t dbbuf_opcode = 0;
  uint16_t dbbuf_status = 0;  // Status Field of Doorbell Buffer Config (0: success or not sent)
  std::vector<VcpuFigures> vcpus;
  std::vector<JobSection> sections;  // --job with several sections or an order; else empty
  bool group_reporting = false;  // the job file's: one text block per reporting group, not per job
  // The host emulation threads' statistics groups ("mainloop",
  // "iothread0", ...), in the report's order.
  std::vector<std::string> host_threads;
  unsigned host_cores = 0;  // 0: one core per thread
  std::string pcie_link;    // pcie.mode=link: PcieLink::describe()
  // Bring-up, reported apart.
  double bringup_ns = 0;
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
  uint64_t unfinished_ios = 0;  // issued and never completed, at the end
  // SIGINT/SIGTERM stopped the run early: the figures cover the simulated
  // time up to the signal (platform/cli/interrupt.h).
  bool interrupted = false;
  int interrupt_signal = 0;
  // Every component's statistics group at the end of the run (measured
  // phase): the JSON "stats" object, and what every figure is computed from.
  stats::GroupValues stats;
  stats::GroupValues bringup_stats;  // the same at the end of bring-up (the JSON's bringup.exits)
  // Host figures (--host-stats only): the simulator process, not the model.
  bool has_host = false;
  double wall_s = 0;
  uint64_t peak_rss_bytes = 0;
  // The model's SystemC process activations in the measured phase, by kind
  // (models/sim/activations.h, process-wide counters outside the tree): name, count.
  std::vector<std::pair<std::string, uint64_t>> activations;

  // A derived figure by its key ("per_io.sq_mmio", "utilization.vcpu.busy"
  // with the vCPU as `instance`); NaN when undefined (a hit rate without
  // the buffer). Throws std::out_of_range for a key the table lacks.
  double figure(const std::string& key, unsigned instance = 0) const;
  // The same for a count (Format::Count), as an integer.
  uint64_t count(const std::string& key, unsigned instance = 0) const;
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
