#include "nvmesim/platform/report/metric_labels.h"

#include <map>

#include "nvmesim/platform/config/params.h"

namespace nvmesim::platform {

namespace {

bool starts(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string upper_queue(const std::string& q) { return q == "sq" ? "SQ" : q == "cq" ? "CQ" : q; }

// The PCIe link's figures (pcie.mode=link): "per_io.by_purpose.shadow_read.tlps"
// -> {"PCIe shadow_read TLPs per I/O", ""}.
MetricLabel pcie_label(const std::string& key) {
  static const std::map<std::string, std::string> what = {
      {"tlps", "TLPs"}, {"wire_bytes", "bytes on the link"}, {"mrd", "read requests (MRd)"},
      {"cpld", "completions with data (CplD)"}, {"mwr", "posted writes (MWr)"},
      {"read_round_trips", "device reads"}, {"upstream_queueing_ns", "upstream queueing, ns"},
      {"downstream_queueing_ns", "downstream queueing, ns"}};
  std::string rest = key, purpose;
  if (starts(rest, "per_io.by_purpose.")) {
    rest = rest.substr(18);
    const size_t dot = rest.find('.');
    purpose = rest.substr(0, dot) + " ";
    rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
  } else if (starts(rest, "per_io.")) {
    rest = rest.substr(7);
  } else if (starts(rest, "utilization.")) {
    return {"PCIe " + rest.substr(12) + " utilisation", "fraction"};
  } else if (rest == "read_time_ns_mean") {
    return {"PCIe device read time, mean", "ns"};
  } else {
    return {"pcie." + key, ""};
  }
  const auto it = what.find(rest);
  return {"PCIe " + purpose + (it == what.end() ? rest : it->second) + " per I/O", ""};
}

}  // namespace

MetricLabel metric_label(const std::string& column) {
  static const std::map<std::string, MetricLabel> exact = {
      {"iops", {"IOPS", "I/Os per s"}},
      {"bw_bytes", {"bandwidth", "bytes per s"}},
      {"ios", {"I/Os", "I/Os"}},
      {"read_ios", {"reads", "I/Os"}},
      {"write_ios", {"writes", "I/Os"}},
      {"io_errors", {"failed I/Os", "I/Os"}},
      {"sim_time_ns", {"measured interval", "ns"}},
      {"lat_ns.min", {"latency, min", "ns"}},
      {"lat_ns.mean", {"latency, mean", "ns"}},
      {"lat_ns.max", {"latency, max", "ns"}},
      {"per_io.sq_mmio", {"SQ MMIO doorbell writes per I/O", ""}},
      {"per_io.cq_mmio", {"CQ MMIO doorbell writes per I/O", ""}},
      {"per_io.exits", {"doorbell exits per I/O", ""}},
      {"per_io.all_exits", {"VM exits per I/O", ""}},
      {"per_io.interrupts", {"interrupts per I/O", ""}},
      {"per_io.msix_messages", {"MSI-X messages per I/O", ""}},
      {"per_io.injection_exits", {"interrupt-injection exits per I/O", ""}},
      {"eventidx.sq_hit_rate", {"SQ EventIdx hit rate (suppressed / updates)", ""}},
      {"eventidx.cq_hit_rate", {"CQ EventIdx hit rate (suppressed / updates)", ""}},
      {"eventidx.shadow_reads", {"shadow doorbell reads by the device", "reads"}},
      {"eventidx.eventidx_writes", {"EventIdx writes by the device", "writes"}},
      {"utilization.overcommitted", {"time with more runnable host threads than cores", "fraction"}},
  };
  if (const auto it = exact.find(column); it != exact.end()) return it->second;
  if (starts(column, "lat_ns.percentile.")) {
    std::string p = column.substr(18);
    if (const size_t dot = p.find('.'); dot != std::string::npos) {
      p.erase(p.find_last_not_of('0') + 1);
      if (p.back() == '.') p.pop_back();
    }
    return {"latency, p" + p, "ns"};
  }
  if (starts(column, "doorbells.") && column.size() > 13) {
    const std::string q = upper_queue(column.substr(10, 2)), what = column.substr(13);
    if (what == "updates") return {q + " doorbell updates", "updates"};
    if (what == "mmio") return {q + " MMIO doorbell writes", "writes"};
    if (what == "suppressed") return {q + " suppressed doorbell updates", "updates"};
  }
  if (starts(column, "pcie.")) return pcie_label(column.substr(5));
  if (starts(column, "exits.count.")) return {"VM exits: " + column.substr(12), "exits"};
  if (starts(column, "exits.time_ns.")) return {"time in VM exits: " + column.substr(14), "ns"};
  if (starts(column, "controller.")) return {"controller: " + column.substr(11), "count"};
  if (starts(column, "utilization.vcpu.") || starts(column, "utilization.device.")) {
    // utilization.vcpu.0.busy -> "vCPU 0 busy"
    const bool vcpu = starts(column, "utilization.vcpu.");
    const std::string rest = column.substr(vcpu ? 17 : 19);
    const size_t dot = rest.find('.');
    const std::string index = rest.substr(0, dot), what = dot == std::string::npos ? "" : rest.substr(dot + 1);
    const std::string who = (vcpu ? "vCPU " : "host thread ") + index;
    if (what == "busy" || what == "guest" || what == "exits" || what == "work" || what == "polling")
      return {who + " " + what + " (share of the interval)", "fraction"};
    return {who + " " + what, ""};
  }
  // A parameter, as a grid axis ("iodepth") or a config column ("config.iodepth").
  const std::string name = starts(column, "config.") ? column.substr(7) : column;
  if (const ParamSpec* spec = ParamRegistry::builtin().find(name)) {
    std::string unit = spec->unit;
    if (spec->kind == ParamKind::Time || spec->kind == ParamKind::Size) unit = "";  // values carry units
    if (unit == "-") unit = "";
    return {spec->name, unit};
  }
  return {column, ""};
}

}  // namespace nvmesim::platform
