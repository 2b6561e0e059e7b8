#include "nvmesim/platform/report/results.h"
#include "nvmesim/platform/fio/fio_json.h"
#include "nvmesim/platform/report/fio_text.h"
#include "nvmesim/platform/report/derived_figures.h"
#include "nvmesim/platform/report/job_sections.h"
#include "nvmesim/platform/report/pcie_figures.h"
#include "nvmesim/platform/report/build_info.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <nlohmann/json.hpp>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/firmware/nvme/nvme_spec.h"
#include "nvmesim/models/hv/vm_exit.h"

namespace nvmesim::platform {

using models::ExitKind;
using models::LatencyHistogram;

namespace {

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percentile_key(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", p);
  return buf;
}

}  // namespace


namespace {
// "0x4013 PRP Offset Invalid (SCT 0h, SC 13h, DNR)": names from the NVMe
// base specification's Generic Command Status table.
std::string status_text(uint16_t status) {
  namespace sc = nvme::sc;
  const uint8_t sct = nvme::status_sct(status), code = nvme::status_sc(status);
  const char* name = "";
  if (sct == 0) {
    switch (code) {
      case sc::INVALID_OPCODE: name = "Invalid Command Opcode "; break;
      case sc::INVALID_FIELD: name = "Invalid Field in Command "; break;
      case sc::DATA_TRANSFER_ERROR: name = "Data Transfer Error "; break;
      case sc::INTERNAL_ERROR: name = "Internal Error "; break;
      case sc::ABORTED_SQ_DELETION: name = "Command Aborted due to SQ Deletion "; break;
      case sc::INVALID_NAMESPACE: name = "Invalid Namespace or Format "; break;
      case sc::PRP_OFFSET_INVALID: name = "PRP Offset Invalid "; break;
      case sc::LBA_OUT_OF_RANGE: name = "LBA Out of Range "; break;
      default: break;
    }
  }
  char b[96];
  std::snprintf(b, sizeof b, "0x%04x %s(SCT %xh, SC %02Xh%s)", status, name, sct, code,
                nvme::status_dnr(status) ? ", DNR" : "");
  return b;
}
}  // namespace

const char* run_outcome(const RunResults& r) {
  if (!r.bringup_ok) return "bringup_failed";
  if (r.device_needs_reset) return "device_needs_reset";
  if (r.stalled) return "stalled";
  if (r.count("io_errors") || r.count("verify.errors")) return "io_errors";
  if (r.interrupted) return "interrupted";
  return "ok";
}

// The mark of a run a signal cut short.
std::string interrupted_line(const RunResults& r) {
  return std::string("INTERRUPTED by ") + interrupt::signal_name(r.interrupt_signal) + " at " +
         fixed(r.sim_time_ns / 1000.0, 1) + " us of the measured phase: the figures cover the run so far";
}

std::string run_headline(const RunResults& r) {
  const std::string outcome = run_outcome(r);
  if (outcome == "bringup_failed") return "BRING-UP FAILED: " + r.bringup_error;
  if (outcome == "device_needs_reset")
    return "DEVICE NEEDS RESET: virtio-blk virtio_error \"" + r.device_error + "\"; " +
           std::to_string(r.unfinished_ios) + " I/Os could not complete (the guest waits for them; " +
           "figures cover the run until nothing could move)";
  if (outcome == "stalled") {
    // The report's first clause (where and when); the queue details follow in it.
    const size_t cut = r.stall_report.find(';');
    return "STALLED: " + r.stall_report.substr(0, cut) +
           " (figures cover the run up to the stall)";
  }
  if (outcome == "io_errors") {
    std::string h = "FAILED: ";
    const uint64_t errors = r.count("io_errors"), verify_errors = r.count("verify.errors");
    if (errors)
      h += std::to_string(errors) + " of " + std::to_string(r.count("ios")) +
           " I/Os completed with an error status (first: " + status_text(r.first_error_status) + ")";
    if (errors && verify_errors) h += "; ";
    if (verify_errors) h += std::to_string(verify_errors) + " reads failed verification";
    return h;
  }
  if (outcome == "interrupted") return interrupted_line(r);
  return "";
}

// The document's layout; its figures are the derived figures' table's
// (figures::put_json writes each section's, in the table's order).
report::Json results_json(const RunResults& r) {
  using report::fixed;
  using report::Json;
  auto put = [&](Json& j, const char* section) { figures::put_json(j, r, section); };
  Json j;
  j["version"] = std::string(NVMESIM_VERSION) + " (commit " + build_commit() + ")";  // a figure traced to its build
  j["outcome"] = run_outcome(r);
  j["headline"] = run_headline(r);
  Json& config = j["config"] = Json::object();
  for (const auto& kv : r.config) config[kv.first] = kv.second;
  if (!r.sections.empty()) j["jobs"] = job_sections_json(r);  // a job file's sections, each its own
  for (const char* section : {"sim_time_ns", "ios", "read_ios", "write_ios", "io_errors", "first_error_status",
                              "verify", "iops", "bw_bytes"})
    put(j, section);
  // fio's latencies (lat = slat + clat), then the driver's own.
  auto latency = [&](const char* key, const LatencyHistogram& h) {
    Json& lat = j[key];
    lat["min"] = h.min();
    lat["mean"] = fixed(h.mean(), 3);
    lat["max"] = h.max();
    Json& percentile = lat["percentile"] = Json::object();
    for (double p : LatencyHistogram::fio_percentiles()) percentile[percentile_key(p)] = h.percentile(p);
  };
  latency("lat_ns", r.lat);
  latency("slat_ns", r.slat);
  latency("clat_ns", r.clat);
  latency("driver_lat_ns", r.driver_lat);
  io_depths_json(j, r.depths);
  for (const char* section : {"doorbells", "eventidx", "exits", "per_io", "controller", "utilization"})
    put(j, section);
  j["bringup"] = {{"ok", r.bringup_ok},
                  {"error", r.bringup_error},
                  {"sim_time_ns", fixed(r.bringup_ns, 3)},
                  {"dbbuf_opcode", unsigned(r.dbbuf_opcode)},
                  {"dbbuf_status", r.dbbuf_status}};
  put(j, "bringup");  // its exits
  const PcieFigures pcie = pcie_figures(r.stats, r.pcie_link);
  if (pcie.present) j["pcie"] = pcie_json(pcie, r.count("ios"), r.figure("utilization.span_ns"));
  j["stall"] = r.stalled ? Json(r.stall_report) : Json(nullptr);
  if (r.virtio)
    j["virtio_blk"] = {{"device_status", unsigned(r.virtio_status)},
                       {"needs_reset", r.device_needs_reset},
                       {"error", r.device_error},
                       {"unfinished_ios", r.unfinished_ios}};
  j["interrupted"] = r.interrupted ? Json(interrupt::signal_name(r.interrupt_signal)) : Json(nullptr);
  if (!r.sections.empty()) put(j, "job_results");
  if (r.has_host) {
    Json by_kind = Json::object();
    for (const auto& [kind, n] : r.activations) by_kind[kind] = n;
    j["host"] = {{"wall_s", fixed(r.wall_s, 3)}, {"peak_rss_bytes", r.peak_rss_bytes}};
    put(j, "host");
    j["host"]["activations"] = by_kind;
  }
  // Every component's statistics (docs/metrics.md lists them).
  j["stats"] = report::stats_json(r.stats);
  return j;
}

void write_json(const RunResults& r, std::ostream& o, const std::string& in) {
  o << in << report::dump(results_json(r), {}, unsigned(in.size() / 2));
}


// fio's latency_target line (stat.c show_thread_status: "latency   :
// target=..., window=..., percentile=..., depth=N"), per job whose search ran.
static void latency_target_lines(std::ostream& o, const RunResults& r) {
  auto param = [&](const char* name) -> std::string {
    for (const auto& [k, v] : r.config)
      if (k == name) return v;
    return "";
  };
  const std::string target = param("latency_target");
  if (target.empty() || target == "0s" || target == "0") return;
  for (size_t v = 0; v < r.vcpus.size(); ++v) {
    const std::string vcpu = "vcpu" + std::to_string(v) + ".";
    const uint64_t* windows = r.stats.find(vcpu + "latency_target_windows");
    const uint64_t* depth = r.stats.find(vcpu + "latency_target_depth");
    if (!windows || !depth) continue;
    o << "    latency   : target=" << target << ", window=" << param("latency_window") << ", percentile="
      << fixed(std::strtod(param("latency_percentile").c_str(), nullptr), 2) << "%, depth=" << *depth << " (vcpu"
      << v << ", " << *windows << " windows judged)\n";
  }
}

void write_normal(const RunResults& r, std::ostream& o) {
  auto cfg = [&](const char* name) -> std::string {
    for (const auto& kv : r.config)
      if (kv.first == name) return kv.second;
    return "?";
  };
  // An interrupted run says so first, also when its headline is another.
  if (r.interrupted && std::string(run_outcome(r)) != "interrupted") o << interrupted_line(r) << "\n";
  const std::string headline = run_headline(r);
  if (!headline.empty()) o << headline << "\n";
  const std::string& pt = cfg("hv.passthrough");
  const bool passthrough = pt == "on" || pt == "true" || pt == "yes" || pt == "1";
  const std::string backend = r.backend.empty() ? cfg("nvme.backend") : r.backend;  // the device's
  if (r.sections.size() > 1)  // each section's own workload is listed below
    o << "jobs: " << r.sections.size() << " sections (their options below), backend=" << backend;
  else
    o << "job: rw=" << cfg("rw") << ", bs=" << cfg("bs") << ", iodepth=" << cfg("iodepth")
      << ", numjobs=" << cfg("numjobs") << ", backend=" << backend;
  if (cfg("device") == "virtio-blk")  // its kicks' EventIdx is VIRTIO_RING_F_EVENT_IDX
    o << ", device=virtio-blk, event_idx=" << cfg("virtio.event_idx")
      << (r.dbbuf_active ? " (negotiated)" : " (not negotiated)");
  else if (passthrough)  // a real SSD: no doorbell buffer, and the device takes doorbells itself
    o << ", passthrough (page_size=" << cfg("hv.page_size") << ", msix_bar_mmap=" << cfg("hv.msix_bar_mmap")
      << ", msix_table=" << cfg("nvme.msix_table") << ")";
  else
    o << ", dbbuf=" << cfg("nvme.dbbuf") << (r.dbbuf_active ? " (active)" : " (inactive)");
  if (!passthrough) o << ", notify=" << cfg("hv.notify");
  o << "\n";
  write_job_sections(r, o);
  if (!r.bringup_ok) {
    o << "  bring-up failed: " << r.bringup_error << "\n";
    return;
  }
  // fio prints a block per job unless group_reporting merges them: a job
  // file's sections each get theirs (their clones one each); otherwise the
  // run is one block.
  if (r.sections.empty()) {
    fio_text::DirectionCounts run;
    for (unsigned k = 0; k < 2; ++k) {
      run.ios[k] = r.count(k ? "write_ios" : "read_ios");
      run.bytes[k] = uint64_t(r.figure(k ? "write_bytes" : "read_bytes"));
    }
    fio_text::direction_blocks(o, run, r.sim_time_ns, r.read, r.write);
  } else {
    fio_text::job_blocks(o, r);
  }
  o << "  driver lat (nsec): min=" << r.driver_lat.min() << ", max=" << r.driver_lat.max()
    << ", avg=" << fixed(r.driver_lat.mean(), 2) << " (driver builds the command .. driver finishes its completion)\n";
  if (r.sections.empty()) fio_text::io_depths(o, r.depths);
  fio_text::group_status(o, r);
  if (const uint64_t errors = r.count("io_errors"))
    o << "    errors: " << errors << " completions with non-zero status\n";
  const uint64_t verified = r.count("verify.verified_reads"), mismatches = r.count("verify.errors");
  if (verified || mismatches) {
    uint64_t intervals = 0;  // the header modes' verify_intervals
    for (size_t v = 0; v < r.vcpus.size(); ++v)
      if (const uint64_t* n = r.stats.find("vcpu" + std::to_string(v) + ".verify_intervals")) intervals += *n;
    o << "    verify: " << verified << " reads checked";
    if (intervals) o << " (" << intervals << " verify_intervals)";
    o << ", " << mismatches << " mismatches\n";
  }
  latency_target_lines(o, r);
  o << "doorbells (measured phase, I/O queues):\n";
  auto line = [&](const std::string& q) {
    const std::string d = "doorbells." + q + ".";
    const double hit = r.figure("eventidx." + q + "_hit_rate");
    o << "  " << q << ": updates=" << r.count(d + "updates") << ", mmio=" << r.count(d + "mmio")
      << ", suppressed=" << r.count(d + "suppressed") << ", eventidx hit rate="
      << (std::isnan(hit) ? std::string("n/a") : fixed(hit * 100, 2) + "%")
      << ", exits/io=" << fixed(r.figure("per_io." + q + "_mmio"), 3) << "\n";
  };
  line("sq");
  line("cq");
  o << "  doorbell exits per I/O: " << fixed(r.figure("per_io.exits"), 3)
    << "; shadow reads: " << r.count("eventidx.shadow_reads")
    << ", eventidx writes: " << r.count("eventidx.eventidx_writes") << "\n";
  if (passthrough)  // docs/metrics.md: these writes are exits only while their page is trapped
    o << "  passthrough: " << r.count("exits.count.mmio_doorbell") << " of " << r.count("doorbells.mmio")
      << " MMIO doorbell writes trapped (VM exits)\n";
  // Two counts that differ: the device's MSI-X writes, and the exits the
  // hypervisor takes to inject an interrupt into the vCPU.
  o << "  MSI-X messages per I/O: " << fixed(r.figure("per_io.interrupts"), 3)
    << "; interrupt-injection exits per I/O: " << fixed(r.figure("per_io.injection_exits"), 3) << "\n";
  if (r.stats.group("virtio_blk"))
    o << "  used-ring notifications: sent " << r.stats.at("virtio_blk.interrupts") << ", suppressed "
      << r.stats.at("virtio_blk.interrupts_suppressed") << " (used_event / NO_INTERRUPT)\n";
  o << "VM exits (measured phase):\n";
  for (unsigned k = 0; k < models::EXIT_KIND_COUNT; ++k) {
    const std::string kind = models::to_string(ExitKind(k));
    const uint64_t n = r.count("exits.count." + kind);
    if (!n) continue;
    char buf[128];
    std::snprintf(buf, sizeof buf, "  %-14s count=%-10llu time=%.1f us\n", kind.c_str(),
                  static_cast<unsigned long long>(n), r.figure("exits.time_ns." + kind) / 1000.0);
    o << buf;
  }
  o << "utilisation:\n";
  auto percent = [&](const char* key, unsigned k) { return fixed(100 * r.figure(key, k), 1); };
  for (unsigned k = 0; k < figures::instances(r, figures::Over::Vcpu); ++k)
    o << "  vcpu" << k << ": busy " << percent("utilization.vcpu.busy", k) << "% (guest "
      << percent("utilization.vcpu.guest", k) << "%, exits " << percent("utilization.vcpu.exits", k) << "%)\n";
  for (unsigned k = 0; k < figures::instances(r, figures::Over::DeviceThread); ++k)
    o << "  " << figures::device_thread(r, k) << ": busy " << percent("utilization.device.busy", k) << "% (work "
      << percent("utilization.device.work", k) << "%, polling " << percent("utilization.device.polling", k)
      << "%), " << r.count("utilization.device.dispatches", k) << " dispatches\n";
  if (r.host_cores)
    o << "  host: " << r.host_cores << " cores, overcommitted " << percent("utilization.overcommitted", 0)
      << "% of the time\n";
  if (const uint64_t n = r.count("controller.lost_notifications")) o << "  lost ioeventfd notifications: " << n << "\n";
  if (const uint64_t n = r.count("controller.stuck_handler_runs"))
    o << "  ioeventfd handlers re-run on a still-readable eventfd: " << n << "\n";
  const PcieFigures pcie = pcie_figures(r.stats, r.pcie_link);
  if (pcie.present) write_pcie_text(pcie, r.count("ios"), r.figure("utilization.span_ns"), o);
  o << "bring-up (apart): " << fixed(r.bringup_ns / 1000.0, 1) << " us, " << r.count("bringup.exit_count")
    << " exits\n";
  if (r.dbbuf_opcode && r.dbbuf_status) {
    char buf[128];
    std::snprintf(buf, sizeof buf,
                  "  Doorbell Buffer Config (0x%02X) failed with status 0x%04X: MMIO doorbells on every queue\n",
                  unsigned(r.dbbuf_opcode), unsigned(r.dbbuf_status));
    o << buf;
  }
  if (r.stalled) o << "STALL: " << r.stall_report << "\n";
  if (r.has_host)
    o << "host: " << fixed(r.wall_s, 3) << " s wall, " << r.peak_rss_bytes / 1048576 << " MiB peak RSS, "
      << fixed(r.figure("host.ios_per_wall_s"), 0) << " I/Os per wall second\n";
  if (r.has_host) {
    o << "  model process activations per I/O: " << fixed(r.figure("host.activations_per_io"), 3);
    const char* sep = " (";
    for (const auto& [kind, n] : r.activations)
      if (n) {
        o << sep << kind << " " << fixed(figures::per_io(r, double(n)), 3);
        sep = ", ";
      }
    o << (*sep == ',' ? ")\n" : "\n");
  }
}

}  // namespace nvmesim::platform
