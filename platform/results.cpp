#include "platform/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "platform/interrupt.h"
#include "firmware/nvme_spec.h"
#include "platform/json_text.h"

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

std::string quoted(const std::string& s) { return json_quoted(s); }

std::string rate_or_null(double r) { return r < 0 ? "null" : fixed(r, 6); }

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

double DirectionFigures::lat_stddev() const {
  const uint64_t n = lat.count();
  if (n < 2) return 0;
  const long double sum = (long double)lat.mean() * n;
  const long double var = (lat_sum_sq - sum * sum / n) / (n - 1);
  return var > 0 ? double(std::sqrt(var)) : 0.0;
}

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
  if (r.stalled) return "stalled";
  if (r.io_errors || r.verify_errors) return "io_errors";
  return "ok";
}

std::string run_headline(const RunResults& r) {
  const std::string outcome = run_outcome(r);
  if (outcome == "bringup_failed") return "BRING-UP FAILED: " + r.bringup_error;
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
  return "";
}

void write_json(const RunResults& r, std::ostream& o, const std::string& in) {
  const std::string i1 = in + "  ", i2 = i1 + "  ", i3 = i2 + "  ";
  o << in << "{\n";
  o << i1 << "\"version\": " << quoted(NVMESIM_VERSION) << ",\n";
  o << i1 << "\"outcome\": " << quoted(run_outcome(r)) << ",\n";
  o << i1 << "\"headline\": " << quoted(run_headline(r)) << ",\n";
  o << i1 << "\"config\": {";
  for (size_t k = 0; k < r.config.size(); ++k)
    o << (k ? ", " : "") << "\n" << i2 << quoted(r.config[k].first) << ": " << quoted(r.config[k].second);
  o << "\n" << i1 << "},\n";
  o << i1 << "\"sim_time_ns\": " << fixed(r.sim_time_ns, 3) << ",\n";
  o << i1 << "\"ios\": " << r.ios << ",\n";
  o << i1 << "\"read_ios\": " << r.read_ios << ",\n";
  o << i1 << "\"write_ios\": " << r.write_ios << ",\n";
  o << i1 << "\"io_errors\": " << r.io_errors << ",\n";
  o << i1 << "\"first_error_status\": " << r.first_error_status << ",\n";
  o << i1 << "\"verify\": {\"verified_reads\": " << r.verified_reads
    << ", \"errors\": " << r.verify_errors << "},\n";
  o << i1 << "\"iops\": " << fixed(r.iops(), 3) << ",\n";
  o << i1 << "\"bw_bytes\": " << fixed(r.bw_bytes(), 3) << ",\n";
  o << i1 << "\"lat_ns\": {\n";
  o << i2 << "\"min\": " << r.lat.min() << ",\n";
  o << i2 << "\"mean\": " << fixed(r.lat.mean(), 3) << ",\n";
  o << i2 << "\"max\": " << r.lat.max() << ",\n";
  o << i2 << "\"percentile\": {";
  bool first = true;
  for (double p : LatencyHistogram::fio_percentiles()) {
    o << (first ? "" : ",") << "\n" << i3 << quoted(percentile_key(p)) << ": " << r.lat.percentile(p);
    first = false;
  }
  o << "\n" << i2 << "}\n" << i1 << "},\n";
  auto doorbell = [&](const char* name, const DoorbellFigures& d, bool last) {
    o << i2 << quoted(name) << ": {\"updates\": " << d.updates << ", \"mmio\": " << d.mmio
      << ", \"suppressed\": " << d.suppressed << "}" << (last ? "\n" : ",\n");
  };
  o << i1 << "\"doorbells\": {\n";
  doorbell("sq", r.sq, false);
  doorbell("cq", r.cq, true);
  o << i1 << "},\n";
  o << i1 << "\"eventidx\": {\"sq_hit_rate\": "
    << (r.dbbuf_active ? rate_or_null(RunResults::hit_rate(r.sq)) : "null")
    << ", \"cq_hit_rate\": "
    << (r.dbbuf_active ? rate_or_null(RunResults::hit_rate(r.cq)) : "null")
    << ", \"dbbuf_active\": " << (r.dbbuf_active ? "true" : "false")
    << ", \"shadow_reads\": " << r.shadow_reads << ", \"eventidx_writes\": " << r.eventidx_writes
    << "},\n";
  o << i1 << "\"exits\": {\n" << i2 << "\"count\": {";
  for (unsigned k = 0; k < models::EXIT_KIND_COUNT; ++k)
    o << (k ? ", " : "") << quoted(models::to_string(ExitKind(k))) << ": " << r.exits.count[k];
  o << "},\n" << i2 << "\"time_ns\": {";
  for (unsigned k = 0; k < models::EXIT_KIND_COUNT; ++k)
    o << (k ? ", " : "") << quoted(models::to_string(ExitKind(k))) << ": "
      << fixed(double(r.exits.time[k].value()) / 1000.0, 3);
  o << "}\n" << i1 << "},\n";
  const uint64_t doorbell_exits = r.sq.mmio + r.cq.mmio;
  o << i1 << "\"per_io\": {\"sq_mmio\": " << fixed(r.per_io(r.sq.mmio), 6)
    << ", \"cq_mmio\": " << fixed(r.per_io(r.cq.mmio), 6)
    << ", \"exits\": " << fixed(r.per_io(doorbell_exits), 6)
    << ", \"all_exits\": " << fixed(r.per_io(r.exits.total_count_excluding_hlt()), 6)
    << ", \"interrupts\": " << fixed(r.per_io(r.interrupts_sent), 6)
    << ", \"msix_messages\": " << fixed(r.per_io(r.interrupts_sent), 6)
    << ", \"injection_exits\": " << fixed(r.per_io(r.exits.count[unsigned(ExitKind::Interrupt)]), 6) << "},\n";
  o << i1 << "\"controller\": {\"commands\": " << r.commands << ", \"interrupts\": " << r.interrupts_sent
    << ", \"dma_reads\": " << r.dma_reads << ", \"dma_writes\": " << r.dma_writes
    << ", \"async_events\": " << r.async_events << ", \"cq_full_waits\": " << r.cq_full_waits
    << ", \"coalesced_completions\": " << r.coalesced_completions
    << ", \"lost_notifications\": " << r.lost_notifications
    << ", \"stuck_handler_runs\": " << r.stuck_handler_runs << "},\n";
  o << i1 << "\"utilization\": {\n" << i2 << "\"vcpu\": [";
  const double span = std::max(r.utilization_span_ns, r.sim_time_ns) > 0 ? std::max(r.utilization_span_ns, r.sim_time_ns) : 1;
  for (size_t k = 0; k < r.vcpus.size(); ++k) {
    const auto& v = r.vcpus[k];
    o << (k ? ", " : "") << "\n" << i3 << "{\"vcpu\": " << k << ", \"busy\": "
      << fixed((v.guest_ns + v.exit_ns) / span, 6) << ", \"guest\": " << fixed(v.guest_ns / span, 6)
      << ", \"exits\": " << fixed(v.exit_ns / span, 6) << ", \"ios\": " << v.ios
      << ", \"interrupts\": " << v.interrupts << "}";
  }
  o << "\n" << i2 << "],\n" << i2 << "\"device\": [";
  for (size_t k = 0; k < r.device_threads.size(); ++k) {
    const auto& t = r.device_threads[k];
    o << (k ? ", " : "") << "\n" << i3 << "{\"thread\": " << quoted(t.name) << ", \"busy\": "
      << fixed((t.busy_ns + t.poll_ns) / span, 6) << ", \"work\": " << fixed(t.busy_ns / span, 6)
      << ", \"polling\": " << fixed(t.poll_ns / span, 6) << ", \"dispatches\": " << t.dispatches
      << ", \"wakeups_from_sleep\": " << t.sleep_wakeups
      << ", \"wakeups_while_polling\": " << t.poll_wakeups << "}";
  }
  o << "\n" << i2 << "],\n" << i2 << "\"host_cores\": " << r.host_cores
    << ", \"overcommitted\": " << fixed(r.overcommitted_ns / span, 6) << ",\n"
    << i2 << "\"span_ns\": " << fixed(span, 3) << "\n" << i1 << "},\n";
  o << i1 << "\"bringup\": {\"ok\": " << (r.bringup_ok ? "true" : "false")
    << ", \"error\": " << quoted(r.bringup_error) << ", \"sim_time_ns\": " << fixed(r.bringup_ns, 3)
    << ", \"dbbuf_opcode\": " << unsigned(r.dbbuf_opcode)
    << ", \"dbbuf_status\": " << r.dbbuf_status << ", \"exits\": {";
  for (unsigned k = 0; k < models::EXIT_KIND_COUNT; ++k)
    o << (k ? ", " : "") << quoted(models::to_string(ExitKind(k))) << ": " << r.bringup_exits.count[k];
  o << "}},\n";
  o << i1 << "\"stall\": " << (r.stalled ? quoted(r.stall_report) : "null") << ",\n";
  o << i1 << "\"interrupted\": "
    << (r.interrupted ? quoted(interrupt::signal_name(r.interrupt_signal)) : "null");
  if (r.has_host) {
    o << ",\n" << i1 << "\"host\": {\"wall_s\": " << fixed(r.wall_s, 3)
      << ", \"peak_rss_bytes\": " << r.peak_rss_bytes << ", \"ios_per_wall_s\": "
      << fixed(r.wall_s > 0 ? double(r.ios) / r.wall_s : 0, 0) << "}";
  }
  o << "\n" << in << "}";
}

void write_normal(const RunResults& r, std::ostream& o) {
  auto cfg = [&](const char* name) -> std::string {
    for (const auto& kv : r.config)
      if (kv.first == name) return kv.second;
    return "?";
  };
  if (r.interrupted)
    o << "INTERRUPTED by " << interrupt::signal_name(r.interrupt_signal) << " at "
      << fixed(r.sim_time_ns / 1000.0, 1) << " us of the measured phase: the figures cover the run so far\n";
  const std::string headline = run_headline(r);
  if (!headline.empty()) o << headline << "\n";
  o << "job: rw=" << cfg("rw") << ", bs=" << cfg("bs") << ", iodepth=" << cfg("iodepth")
    << ", numjobs=" << cfg("numjobs") << ", backend=" << cfg("nvme.backend")
    << ", dbbuf=" << cfg("nvme.dbbuf") << (r.dbbuf_active ? " (active)" : " (inactive)")
    << ", notify=" << cfg("hv.notify") << "\n";
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
  direction("read", r.read_ios, r.read_bytes);
  direction("write", r.write_ios, r.write_bytes);
  o << "    lat (nsec): min=" << r.lat.min() << ", max=" << r.lat.max()
    << ", avg=" << fixed(r.lat.mean(), 2) << "\n";
  o << "    lat percentiles (nsec):\n";
  const auto& ps = LatencyHistogram::fio_percentiles();
  for (size_t k = 0; k < ps.size(); ++k) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%6.2fth=[%llu]", k % 4 == 0 ? "     |" : ", ", ps[k],
                  static_cast<unsigned long long>(r.lat.percentile(ps[k])));
    o << buf;
    if (k % 4 == 3 || k + 1 == ps.size()) o << "\n";
  }
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
    << "; shadow reads: " << r.shadow_reads << ", eventidx writes: " << r.eventidx_writes << "\n";
  // Two counts that differ: the device's MSI-X writes, and the exits the
  // hypervisor takes to inject an interrupt into the vCPU.
  o << "  MSI-X messages per I/O: " << fixed(r.per_io(r.interrupts_sent), 3)
    << "; interrupt-injection exits per I/O: "
    << fixed(r.per_io(r.exits.count[unsigned(ExitKind::Interrupt)]), 3) << "\n";
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
  const double span = std::max(r.utilization_span_ns, r.sim_time_ns) > 0 ? std::max(r.utilization_span_ns, r.sim_time_ns) : 1;
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
}

}  // namespace nvmesim::platform
