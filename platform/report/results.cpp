#include "nvmesim/platform/report/results.h"
#include "nvmesim/platform/fio/fio_json.h"
#include "nvmesim/platform/report/fio_text.h"
#include "nvmesim/platform/report/job_sections.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <nlohmann/json.hpp>

#include "nvmesim/platform/cli/interrupt.h"
#include "nvmesim/firmware/nvme/nvme_spec.h"

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

// What utilisation is a fraction of (RunResults::utilization_span_ns).
double utilization_span(const RunResults& r) {
  const double span = std::max(r.utilization_span_ns, r.sim_time_ns);
  return span > 0 ? span : 1;
}

std::string percentile_key(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", p);
  return buf;
}

// Human units the way fio prints them (k = 1000 for IOPS).
std::string human_count(double v) {
  char buf[32];
  if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string human_bw(double bytes_per_s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1fMiB/s (%.1fMB/s)", bytes_per_s / 1048576.0, bytes_per_s / 1e6);
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
  if (r.io_errors || r.verify_errors) return "io_errors";
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
    if (r.io_errors)
      h += std::to_string(r.io_errors) + " of " + std::to_string(r.ios) +
           " I/Os completed with an error status (first: " + status_text(r.first_error_status) + ")";
    if (r.io_errors && r.verify_errors) h += "; ";
    if (r.verify_errors) h += std::to_string(r.verify_errors) + " reads failed verification";
    return h;
  }
  if (outcome == "interrupted") return interrupted_line(r);
  return "";
}

report::Json results_json(const RunResults& r) {
  using report::fixed;
  using report::Json;
  Json j;
  j["version"] = NVMESIM_VERSION;
  j["outcome"] = run_outcome(r);
  j["headline"] = run_headline(r);
  Json& config = j["config"] = Json::object();
  for (const auto& kv : r.config) config[kv.first] = kv.second;
  if (!r.sections.empty()) j["jobs"] = job_sections_json(r);  // a job file's sections, each its own
  j["sim_time_ns"] = fixed(r.sim_time_ns, 3);
  j["ios"] = r.ios;
  j["read_ios"] = r.read_ios;
  j["write_ios"] = r.write_ios;
  j["io_errors"] = r.io_errors;
  j["first_error_status"] = r.first_error_status;
  j["verify"] = {{"verified_reads", r.verified_reads}, {"errors", r.verify_errors}};
  j["iops"] = report::rate(r.iops());
  j["bw_bytes"] = report::rate(r.bw_bytes());
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
  auto doorbell = [](const DoorbellFigures& d) {
    return Json{{"updates", d.updates}, {"mmio", d.mmio}, {"suppressed", d.suppressed}};
  };
  j["doorbells"] = {{"sq", doorbell(r.sq)}, {"cq", doorbell(r.cq)}};
  auto rate = [&](const DoorbellFigures& d) -> Json {
    const double h = RunResults::hit_rate(d);
    return r.dbbuf_active && h >= 0 ? fixed(h, 6) : Json(nullptr);
  };
  j["eventidx"] = {{"sq_hit_rate", rate(r.sq)},
                   {"cq_hit_rate", rate(r.cq)},
                   {"dbbuf_active", r.dbbuf_active},
                   {"shadow_reads", r.shadow_reads},
                   {"eventidx_writes", r.eventidx_writes}};
  Json count = Json::object(), time = Json::object();
  for (unsigned k = 0; k < models::EXIT_KIND_COUNT; ++k) {
    count[models::to_string(ExitKind(k))] = r.exits.count[k];
    time[models::to_string(ExitKind(k))] = fixed(double(r.exits.time[k].value()) / 1000.0, 3);
  }
  j["exits"] = {{"count", count}, {"time_ns", time}};
  j["per_io"] = {{"sq_mmio", fixed(r.per_io(r.sq.mmio), 6)},
                 {"cq_mmio", fixed(r.per_io(r.cq.mmio), 6)},
                 {"exits", fixed(r.per_io(r.sq.mmio + r.cq.mmio), 6)},
                 {"all_exits", fixed(r.per_io(r.exits.total_count_excluding_hlt()), 6)},
                 {"interrupts", fixed(r.per_io(r.interrupts_sent), 6)},
                 {"msix_messages", fixed(r.per_io(r.interrupts_sent), 6)},
                 {"injection_exits", fixed(r.per_io(r.exits.count[unsigned(ExitKind::Interrupt)]), 6)}};
  j["controller"] = {{"commands", r.commands},
                     {"interrupts", r.interrupts_sent},
                     {"dma_reads", r.dma_reads},
                     {"dma_writes", r.dma_writes},
                     {"async_events", r.async_events},
                     {"cq_full_waits", r.cq_full_waits},
                     {"coalesced_completions", r.coalesced_completions},
                     {"lost_notifications", r.lost_notifications},
                     {"stuck_handler_runs", r.stuck_handler_runs}};
  const double span = utilization_span(r);
  Json vcpus = Json::array(), device = Json::array();
  for (size_t k = 0; k < r.vcpus.size(); ++k) {
    const auto& v = r.vcpus[k];
    vcpus.push_back({{"vcpu", k},
                     {"busy", fixed((v.guest_ns + v.exit_ns) / span, 6)},
                     {"guest", fixed(v.guest_ns / span, 6)},
                     {"exits", fixed(v.exit_ns / span, 6)},
                     {"ios", v.ios},
                     {"interrupts", v.interrupts}});
  }
  for (const auto& t : r.device_threads)
    device.push_back({{"thread", t.name},
                      {"busy", fixed((t.busy_ns + t.poll_ns) / span, 6)},
                      {"work", fixed(t.busy_ns / span, 6)},
                      {"polling", fixed(t.poll_ns / span, 6)},
                      {"dispatches", t.dispatches},
                      {"wakeups_from_sleep", t.sleep_wakeups},
                      {"wakeups_while_polling", t.poll_wakeups}});
  j["utilization"] = {{"vcpu", vcpus},
                      {"device", device},
                      {"host_cores", r.host_cores},
                      {"overcommitted", fixed(r.overcommitted_ns / span, 6)},
                      {"span_ns", fixed(span, 3)}};
  Json bringup_exits = Json::object();
  for (unsigned k = 0; k < models::EXIT_KIND_COUNT; ++k)
    bringup_exits[models::to_string(ExitKind(k))] = r.bringup_exits.count[k];
  j["bringup"] = {{"ok", r.bringup_ok},
                  {"error", r.bringup_error},
                  {"sim_time_ns", fixed(r.bringup_ns, 3)},
                  {"dbbuf_opcode", unsigned(r.dbbuf_opcode)},
                  {"dbbuf_status", r.dbbuf_status},
                  {"exits", bringup_exits}};
  if (r.pcie.present) j["pcie"] = pcie_json(r.pcie, r.ios, span);
  j["stall"] = r.stalled ? Json(r.stall_report) : Json(nullptr);
  if (r.virtio)
    j["virtio_blk"] = {{"device_status", unsigned(r.virtio_status)},
                       {"needs_reset", r.device_needs_reset},
                       {"error", r.device_error},
                       {"unfinished_ios", r.unfinished_ios}};
  j["interrupted"] = r.interrupted ? Json(interrupt::signal_name(r.interrupt_signal)) : Json(nullptr);
  if (!r.sections.empty()) j["job_results"] = job_results_json(r);
  if (r.has_host) {
    Json by_kind = Json::object();
    for (const auto& [kind, n] : r.activations) by_kind[kind] = n;
    j["host"] = {{"wall_s", fixed(r.wall_s, 3)},
                 {"peak_rss_bytes", r.peak_rss_bytes},
                 {"ios_per_wall_s", fixed(r.wall_s > 0 ? double(r.ios) / r.wall_s : 0, 0)},
                 {"activations_per_io", fixed(r.per_io(r.activation_total()), 3)},
                 {"activations", by_kind}};
  }
  // Every component's statistics (docs/metrics.md lists them).
  j["stats"] = report::stats_json(r.stats);
  return j;
}

void write_json(const RunResults& r, std::ostream& o, const std::string& in) {
  o << in << report::dump(results_json(r), {}, unsigned(in.size() / 2));
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
  if (r.sections.size() > 1)  // each section's own workload is listed below
    o << "jobs: " << r.sections.size() << " sections (their options below), backend=" << cfg("nvme.backend");
  else
    o << "job: rw=" << cfg("rw") << ", bs=" << cfg("bs") << ", iodepth=" << cfg("iodepth")
      << ", numjobs=" << cfg("numjobs") << ", backend=" << cfg("nvme.backend");
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
  const double secs = r.sim_time_ns / 1e9;
  auto direction = [&](const char* name, uint64_t ios, uint64_t bytes) {
    if (!ios) return;
    o << "  " << name << ": IOPS=" << human_count(secs > 0 ? ios / secs : 0)
      << ", BW=" << human_bw(secs > 0 ? bytes / secs : 0) << " (" << ios << " I/Os in "
      << fixed(r.sim_time_ns / 1000.0, 1) << " us simulated)\n";
  };
  // fio's layout (stat.c show_ddir_status): per direction slat, clat, lat,
  // then clat's percentiles, in fio's units (platform/report/fio_text.h).
  for (const DirectionFigures* d : {&r.read, &r.write}) {
    direction(d == &r.read ? "read" : "write", d == &r.read ? r.read_ios : r.write_ios,
              d == &r.read ? r.read_bytes : r.write_bytes);
    if (!d->lat.hist.count()) continue;
    fio_text::latency_line(o, "slat", d->slat);
    fio_text::latency_line(o, "clat", d->clat);
    fio_text::latency_line(o, " lat", d->lat);
    fio_text::percentiles(o, "clat", d->clat.hist);
  }
  o << "  driver lat (nsec): min=" << r.driver_lat.min() << ", max=" << r.driver_lat.max()
    << ", avg=" << fixed(r.driver_lat.mean(), 2) << " (driver builds the command .. driver finishes its completion)\n";
  {
    uint64_t total = 0;
    for (uint64_t c : r.depths.depth) total += c;
    const auto level = depth_shares(r.depths.depth, total);
    const auto submit = depth_shares(r.depths.submit, r.depths.submit_calls);
    const auto complete = depth_shares(r.depths.complete, r.depths.complete_calls);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "  IO depths    : 1=%3.1f%%, 2=%3.1f%%, 4=%3.1f%%, 8=%3.1f%%, 16=%3.1f%%, 32=%3.1f%%, >=64=%3.1f%%\n",
                  level[0], level[1], level[2], level[3], level[4], level[5], level[6]);
    o << buf;
    for (int k = 0; k < 2; ++k) {
      const auto& v = k ? complete : submit;
      std::snprintf(buf, sizeof buf,
                    "     %s  : 0=%3.1f%%, 4=%3.1f%%, 8=%3.1f%%, 16=%3.1f%%, 32=%3.1f%%, 64=%3.1f%%, >=64=%3.1f%%\n",
                    k ? "complete" : "submit  ", v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
      o << buf;
    }
  }
  fio_text::group_status(o, r);
  if (r.io_errors) o << "    errors: " << r.io_errors << " completions with non-zero status\n";
  if (r.verified_reads || r.verify_errors)
    o << "    verify: " << r.verified_reads << " reads checked, " << r.verify_errors
      << " mismatches\n";
  o << "doorbells (measured phase, I/O queues):\n";
  auto line = [&](const char* q, const DoorbellFigures& d) {
    o << "  " << q << ": updates=" << d.updates << ", mmio=" << d.mmio
      << ", suppressed=" << d.suppressed << ", eventidx hit rate="
      << (r.dbbuf_active && RunResults::hit_rate(d) >= 0 ? fixed(RunResults::hit_rate(d) * 100, 2) + "%"
                                                          : std::string("n/a"))
      << ", exits/io=" << fixed(r.per_io(d.mmio), 3) << "\n";
  };
  line("sq", r.sq);
  line("cq", r.cq);
  o << "  doorbell exits per I/O: " << fixed(r.per_io(r.sq.mmio + r.cq.mmio), 3)
    << "; shadow reads: " << r.shadow_reads << ", eventidx writes: " << r.eventidx_writes << "\n";  if (passthrough)  // docs/metrics.md: these writes are exits only while their page is trapped
    o << "  passthrough: " << r.exits.count[unsigned(ExitKind::MmioDoorbell)] << " of "
      << r.sq.mmio + r.cq.mmio << " MMIO doorbell writes trapped (VM exits)\n";
  // Two counts that differ: the device's MSI-X writes, and the exits the
  // hypervisor takes to inject an interrupt into the vCPU.
  o << "  MSI-X messages per I/O: " << fixed(r.per_io(r.interrupts_sent), 3)
    << "; interrupt-injection exits per I/O: "
    << fixed(r.per_io(r.exits.count[unsigned(ExitKind::Interrupt)]), 3) << "\n";
  if (r.stats.group("virtio_blk"))
    o << "  used-ring notifications: sent " << r.stats.at("virtio_blk.interrupts") << ", suppressed "
      << r.stats.at("virtio_blk.interrupts_suppressed") << " (used_event / NO_INTERRUPT)\n";
  o << "VM exits (measured phase):\n";
  for (unsigned k = 0; k < models::EXIT_KIND_COUNT; ++k) {
    if (!r.exits.count[k]) continue;
    char buf[128];
    std::snprintf(buf, sizeof buf, "  %-14s count=%-10llu time=%.1f us\n",
                  models::to_string(ExitKind(k)), static_cast<unsigned long long>(r.exits.count[k]),
                  double(r.exits.time[k].value()) / 1e6);
    o << buf;
  }
  o << "utilisation:\n";
  const double span = utilization_span(r);
  for (size_t k = 0; k < r.vcpus.size(); ++k) {
    const auto& v = r.vcpus[k];
    o << "  vcpu" << k << ": busy " << fixed(100 * (v.guest_ns + v.exit_ns) / span, 1)
      << "% (guest " << fixed(100 * v.guest_ns / span, 1) << "%, exits "
      << fixed(100 * v.exit_ns / span, 1) << "%)\n";
  }
  for (const auto& t : r.device_threads)
    o << "  " << t.name << ": busy " << fixed(100 * (t.busy_ns + t.poll_ns) / span, 1)
      << "% (work " << fixed(100 * t.busy_ns / span, 1) << "%, polling "
      << fixed(100 * t.poll_ns / span, 1) << "%), " << t.dispatches << " dispatches\n";
  if (r.host_cores)
    o << "  host: " << r.host_cores << " cores, overcommitted "
      << fixed(100 * r.overcommitted_ns / span, 1) << "% of the time\n";
  if (r.lost_notifications) o << "  lost ioeventfd notifications: " << r.lost_notifications << "\n";
  if (r.stuck_handler_runs)
    o << "  ioeventfd handlers re-run on a still-readable eventfd: " << r.stuck_handler_runs << "\n";
  if (r.pcie.present) write_pcie_text(r.pcie, r.ios, span, o);
  o << "bring-up (apart): " << fixed(r.bringup_ns / 1000.0, 1) << " us, "
    << r.bringup_exits.total_count_excluding_hlt() << " exits\n";
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
      << fixed(r.wall_s > 0 ? r.ios / r.wall_s : 0, 0) << " I/Os per wall second\n";
  if (r.has_host) {
    o << "  model process activations per I/O: " << fixed(r.per_io(r.activation_total()), 3);
    const char* sep = " (";
    for (const auto& [kind, n] : r.activations)
      if (n) {
        o << sep << kind << " " << fixed(r.per_io(n), 3);
        sep = ", ";
      }
    o << (*sep == ',' ? ")\n" : "\n");
  }
}

}  // namespace nvmesim::platform
